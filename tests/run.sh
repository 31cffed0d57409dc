#!/bin/sh
# Runs every test of attnviz and ends with one line "N passed, M failed".
#   $TEST_UNIT  the C unit-test binary (built by make)
#   $ATTNVIZ    the attnviz binary the CLI tests run
# Python tests use Debian's interpreter (/usr/bin/python3), where python3-numpy,
# python3-torch and python3-jsonschema are installed by `make deps`.
here=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$TEST_UNIT" 2>&1 | tee "$log"
u=$(tail -n 1 "$log")
up=$(echo "$u" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1/p')
uf=$(echo "$u" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\2/p')
[ -n "$up" ] || { up=0; uf=1; echo "unit tests did not finish"; }

"$PY" "$here/pyrun.py" 2>&1 | tee "$log"
p=$(tail -n 1 "$log")
pp=$(echo "$p" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1/p')
pf=$(echo "$p" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\2/p')
[ -n "$pp" ] || { pp=0; pf=1; echo "python tests did not finish"; }

total_p=$((up + pp)); total_f=$((uf + pf))
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ] && [ "$total_p" -gt 0 ]
