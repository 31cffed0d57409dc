"""Runs the Python tests of attnviz: every function test_* in tests/test_*.py.

No pytest needed. Each test gets a fresh temporary folder via the `tmp` argument
when it declares one. Helpers shared by the test files live in tests/helpers.py.
Prints one line per test and ends with "python: N passed, M failed" (and how many
were skipped, each with its reason: helpers.skip, e.g. data that is absent).
Usage: pyrun.py [SUBSTRING]   (run only tests whose file::name contains it)"""
import importlib.util, inspect, os, sys, tempfile, time, traceback, shutil

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

def main():
    filt = sys.argv[1] if len(sys.argv) > 1 else None
    passed = failed = skipped = 0
    from helpers import Skipped
    for fname in sorted(os.listdir(here)):
        if not (fname.startswith("test_") and fname.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(here, fname))
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception:
            print(f"FAIL {fname} (import)"); traceback.print_exc(); failed += 1
            continue
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if not name.startswith("test_") or fn.__module__ != mod.__name__:
                continue
            full = f"{fname}::{name}"
            if filt and filt not in full:
                continue
            tmp = tempfile.mkdtemp(prefix="attnviz-py-")
            t0 = time.time()
            try:
                if "tmp" in inspect.signature(fn).parameters:
                    fn(tmp=tmp)
                else:
                    fn()
                passed += 1
                print(f"ok   {full} ({time.time()-t0:.2f}s)", flush=True)
            except Skipped as why:
                skipped += 1
                print(f"skip {full}: {why}", flush=True)
            except Exception:
                failed += 1
                print(f"FAIL {full}", flush=True)
                traceback.print_exc()
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    print(f"python: {passed} passed, {failed} failed" + (f" ({skipped} skipped)" if skipped else ""))
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
