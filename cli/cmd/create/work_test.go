package create

import (
	"testing"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestCreateWorkTimeoutMustBePositive(t *testing.T) {
	cmd := newCreateWorkCommand(&cmdutil.Globals{})
	cmd.SetArgs([]string{"app", "-f", "x.yaml", "--clusters", "c1", "--wait", "--timeout", "0s"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || err.Error() != "--timeout 0s must be positive" {
		t.Errorf("err = %v, want the timeout refused", err)
	}
}
