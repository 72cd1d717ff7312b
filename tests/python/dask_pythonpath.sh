#!/bin/sh
# dask_pythonpath.sh DIST_PACKAGES [PYTHON] — for a Python without Dask (the GPU machine's 3.12):
# makes a folder of links to the Dask of DIST_PACKAGES (Debian's python3-dask, python3-distributed
# and their dependencies, unpacked there, e.g. /tmp/gpu-prefix/usr/lib/python3/dist-packages) and
# prints its path, for PYTHONPATH. Only the modules PYTHON (default python3) cannot import are
# linked, so Debian's 3.11 builds (psutil, yaml's C part) never shadow PYTHON's own; a module that
# is missing in both is named on stderr (psutil has no pure-Python fallback: distributed needs it).
set -eu
src=${1:?usage: dask_pythonpath.sh DIST_PACKAGES [PYTHON]}
py=${2:-python3}
out=${DASK_PYTHONPATH_DIR:-/tmp/dask-pythonpath}
mkdir -p "$out"
for m in dask distributed toolz tlz cloudpickle tblib zict heapdict sortedcontainers msgpack locket partd \
         fsspec click yaml tornado jinja2 markupsafe psutil packaging urllib3 six; do
  "$py" -c "import $m" 2>/dev/null && continue
  if [ -e "$src/$m" ]; then ln -sfn "$src/$m" "$out/$m"
  elif [ -e "$src/$m.py" ]; then ln -sfn "$src/$m.py" "$out/$m.py"
  else echo "dask_pythonpath: $m: neither $py nor $src has it" >&2
  fi
done
echo "$out"
