package credentialplugin_test

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/cli"
)

func TestCredentialPluginRefusesShortLifetimesAndMissingIdentity(t *testing.T) {
	out, errOut := &strings.Builder{}, &strings.Builder{}
	code := cli.Run(t.Context(), cli.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, []string{"credential-plugin", "--token-lifetime", "1m"})
	if code == 0 || !strings.Contains(errOut.String(), "10m or more") {
		t.Errorf("exit %d, %s", code, errOut.String())
	}
	errOut.Reset()
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	code = cli.Run(t.Context(), cli.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, []string{"credential-plugin"})
	if code == 0 || !strings.Contains(errOut.String(), "no --kubeconfig") || out.Len() != 0 {
		t.Errorf("exit %d, out %q, err %s", code, out.String(), errOut.String())
	}
}
