package controlplane

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// loadClientCert moves the client certificate files of cfg into its data
// fields, so that the config (and kubeconfigs written from it) stand alone.
func loadClientCert(cfg *rest.Config) error {
	var err error
	if cfg.CertFile != "" {
		if cfg.CertData, err = os.ReadFile(cfg.CertFile); err != nil {
			return err
		}
		cfg.CertFile = ""
	}
	if cfg.KeyFile != "" {
		if cfg.KeyData, err = os.ReadFile(cfg.KeyFile); err != nil {
			return err
		}
		cfg.KeyFile = ""
	}
	return nil
}

// Kubeconfig renders a client configuration as a kubeconfig with one
// cluster, user and context, all named name.
func Kubeconfig(cfg *rest.Config, name string) *clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return kc
}

// writeKubeconfig writes cfg as a kubeconfig file, atomically and private.
func writeKubeconfig(path string, cfg *rest.Config, name string) error {
	data, err := clientcmd.Write(*Kubeconfig(cfg, name))
	if err != nil {
		return fmt.Errorf("render kubeconfig %s: %w", path, err)
	}
	return writeFile(path, data, 0o600)
}
