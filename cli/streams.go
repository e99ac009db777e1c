package cli

import (
	"github.com/flotilla-io/flotilla/cli/cmd/join"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// IOStreams are where a command reads its input and writes its output.
type IOStreams = cmdutil.IOStreams

// StdStreams returns the streams of the process.
func StdStreams() IOStreams { return cmdutil.StdStreams() }

// BootstrapKubeconfig is the kubeconfig an agent joins the hub with: the
// hub's URL and CA, and a bootstrap token (join.BootstrapKubeconfig).
func BootstrapKubeconfig(hubURL string, ca []byte, token string) ([]byte, error) {
	return join.BootstrapKubeconfig(hubURL, ca, token)
}
