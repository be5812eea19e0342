// The PASS/FAIL tally the browser checks share (host.mjs, viewer.mjs, live.mjs).
// `check(name, problems)` prints `PASS name`, or `FAIL name: why` when `problems` is not empty;
// `finish()` prints `N passed, M failed` and exits 0 only when checks ran and all passed (a run
// in which none ran fails as `harness`).
export function checks() {
  let passed = 0;
  let failed = 0;
  const check = (name, problems) => {
    if (problems.length === 0) {
      passed += 1;
      console.log(`PASS ${name}`);
    } else {
      failed += 1;
      console.log(`FAIL ${name}: ${problems.join("; ")}`);
    }
  };
  const finish = () => {
    if (passed + failed === 0) check("harness", ["no check ran"]);
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
  };
  return { check, finish };
}
