"""Word links, shared by training (silver alignments) and the engine (forced decoding): the
Pharaoh ``i-j`` text form (source word i, target word j, from 0) and the grow-diag-final-and
symmetrisation. A leaf: standard library only, so every stage may import it."""
from __future__ import annotations

from typing import Iterable

Links = set[tuple[int, int]]

_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def pharaoh(links: Iterable[tuple[int, int]]) -> str:
    """[(0, 0), (1, 2)] -> ``"0-0 1-2"`` (in the order given)."""
    return " ".join(f"{i}-{j}" for i, j in links)


def parse_pharaoh(line: str) -> list[tuple[int, int]]:
    """``"0-0 1-2"`` -> [(0, 0), (1, 2)] (in the order written)."""
    return [(int(i), int(j)) for i, j in (p.split("-") for p in line.split())]


def grow_diag_final_and(forward: Links, backward: Links) -> Links:
    """Symmetrised links (Koehn et al. 2003; the Moses ``grow-diag-final-and`` heuristic): start
    from the intersection, grow into neighbouring union links that cover an unaligned word, then add
    union links whose both words are still unaligned."""
    union = forward | backward
    links = forward & backward
    src_done = {i for i, _ in links}
    tgt_done = {j for _, j in links}
    grew = True
    while grew:
        grew = False
        for i, j in sorted(links):
            for di, dj in _NEIGHBOURS:
                link = (i + di, j + dj)
                if link in union and link not in links and (link[0] not in src_done or link[1] not in tgt_done):
                    links.add(link)
                    src_done.add(link[0])
                    tgt_done.add(link[1])
                    grew = True
    for direction in (forward, backward):
        for i, j in sorted(direction):
            if i not in src_done and j not in tgt_done:
                links.add((i, j))
                src_done.add(i)
                tgt_done.add(j)
    return links
