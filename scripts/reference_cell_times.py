"""Regenerate a chapter's reference notebook (``python -m posteval.book reference NN``) and write each code
cell's wall time to a JSON file as the run goes, e.g. to check that every cell stays under a third of nbval's
cell timeout on a loaded machine (run a second busy process beside it).

    python scripts/reference_cell_times.py 03 cell_times.json
"""
import json
import sys
import time

import nbclient

from posteval import book

_Client = nbclient.NotebookClient
times = []


class _TimedClient(_Client):
    async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
        t0 = time.time()
        try:
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
        finally:
            if cell.cell_type == "code":
                times.append({"index": cell_index, "start": time.strftime("%H:%M:%S", time.localtime(t0)),
                              "seconds": round(time.time() - t0, 1), "source": cell.source[:80]})
                with open(sys.argv[2], "w") as f:
                    json.dump(times, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    nbclient.NotebookClient = _TimedClient  # book.make_reference imports it at call time
    t0 = time.time()
    out = book.make_reference(book.resolve_chapter(sys.argv[1]))
    print(f"{out}: {time.time() - t0:.1f} s; slowest cell {max(t['seconds'] for t in times)} s")
