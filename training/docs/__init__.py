"""The documentation corpus: English/German pairs from the manuals Debian packages in both
languages (LibreOffice's help, GNOME's help, Debian's guides), fetched at data-build time.

``packages`` fetches and unpacks, ``markup`` finds a page's blocks, ``pairing`` pairs and filters
them, ``sources`` lists the manuals, ``collect`` builds the corpus and writes it with its data card.
"""
