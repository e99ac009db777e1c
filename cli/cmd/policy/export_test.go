package policy

// TestReport is what `policy test -o json` prints, for the tests that run
// the whole command line (package policy_test).
type TestReport = policyTestReport
