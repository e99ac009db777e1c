package controlplane

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExternalEtcdValidation: bad --etcd-servers and TLS files are refused
// with a sentence naming the flag; good ones become kube-apiserver flags.
func TestExternalEtcdValidation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	p, err := ensurePKI(dir, servingHosts(), []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	ca, cert, key := p.path(caCertFile), p.path(adminCertFile), p.path(adminKeyFile)
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := EtcdClientTLS{CAFile: ca, CertFile: cert, KeyFile: key}
	tests := []struct {
		servers []string
		tls     EtcdClientTLS
		want    string // "" for accepted
	}{
		{nil, EtcdClientTLS{}, ""},
		{[]string{"http://127.0.0.1:2379"}, EtcdClientTLS{}, ""},
		{[]string{"https://127.0.0.1:2379", "https://etcd-2.example.com:2379"}, good, ""},
		{[]string{"https://127.0.0.1:2379"}, EtcdClientTLS{CAFile: ca}, ""},
		{nil, good, "give its --etcd-servers too"},
		{[]string{"127.0.0.1:2379"}, EtcdClientTLS{}, "is not an etcd client URL"},
		{[]string{"ftp://127.0.0.1:2379"}, EtcdClientTLS{}, "is not an etcd client URL"},
		{[]string{"https://127.0.0.1:2379/v3"}, EtcdClientTLS{}, "is not an etcd client URL"},
		{[]string{"https://127.0.0.1"}, EtcdClientTLS{}, "has no port"},
		{[]string{"https://127.0.0.1:99999"}, EtcdClientTLS{}, "is not a port number"},
		{[]string{"https://127.0.0.1:2379", "https://127.0.0.1:2379/"}, EtcdClientTLS{}, "twice"},
		{[]string{"https://127.0.0.1:2379", "http://127.0.0.1:2380"}, EtcdClientTLS{}, "mixes http:// and https://"},
		{[]string{"http://127.0.0.1:2379"}, good, "are for https:// etcd servers"},
		{[]string{"https://127.0.0.1:2379"}, EtcdClientTLS{CAFile: ca, CertFile: cert}, "go together"},
		{[]string{"https://127.0.0.1:2379"}, EtcdClientTLS{CAFile: ca, KeyFile: key}, "go together"},
		{[]string{"https://127.0.0.1:2379"}, EtcdClientTLS{CAFile: filepath.Join(dir, "missing.crt")}, "--etcd-cafile"},
		{[]string{"https://127.0.0.1:2379"}, EtcdClientTLS{CAFile: notPEM}, "holds no PEM certificate"},
		{[]string{"https://127.0.0.1:2379"}, EtcdClientTLS{CAFile: ca, CertFile: cert, KeyFile: p.path(kcmKeyFile)}, "are not a PEM certificate and its key"},
	}
	for _, tt := range tests {
		err := validateEtcdServers(tt.servers, tt.tls)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v %+v: %v, want accepted", tt.servers, tt.tls, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v %+v: error %v, want %q", tt.servers, tt.tls, err, tt.want)
		}
	}

	args := apiServerArgs(p, []string{"https://a:2379", "https://b:2379"}, good, "127.0.0.1", 6443, "127.0.0.1")
	for _, want := range []string{"--etcd-servers=https://a:2379,https://b:2379", "--etcd-cafile=" + ca, "--etcd-certfile=" + cert, "--etcd-keyfile=" + key} {
		if !slices.Contains(args, want) {
			t.Errorf("kube-apiserver args %v lack %s", args, want)
		}
	}
	for _, a := range apiServerArgs(p, []string{"http://a:2379"}, EtcdClientTLS{}, "127.0.0.1", 6443, "127.0.0.1") {
		if strings.HasPrefix(a, "--etcd-cafile") || strings.HasPrefix(a, "--etcd-certfile") {
			t.Errorf("plain etcd servers, yet %s", a)
		}
	}
}
