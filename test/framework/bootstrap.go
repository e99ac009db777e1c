package framework

import (
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/cli"
)

// WriteBootstrapKubeconfig writes to path what `flotilla join` would
// store: the hub's URL, the CA of the hub whose admin kubeconfig is given,
// and the join token.
func WriteBootstrapKubeconfig(adminKubeconfig, url, token, path string) error {
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		return err
	}
	var ca []byte
	for _, c := range admin.Clusters {
		ca = c.CertificateAuthorityData
	}
	if len(ca) == 0 {
		return fmt.Errorf("%s names no CA of the hub", adminKubeconfig)
	}
	data, err := cli.BootstrapKubeconfig(url, ca, token)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
