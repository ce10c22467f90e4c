"""The local command line: nmt translate, eval, calibrate and align, big files streamed, the HTML report."""
