package kubeconfig

import (
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestProxyKubeconfig(t *testing.T) {
	raw := clientcmdapi.Config{
		CurrentContext: "hub",
		Clusters:       map[string]*clientcmdapi.Cluster{"hub": {Server: "https://127.0.0.1:6443/", CertificateAuthorityData: []byte("ca")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"alice": {Token: "t"}},
		Contexts:       map[string]*clientcmdapi.Context{"hub": {Cluster: "hub", AuthInfo: "alice"}, "other": {Cluster: "missing", AuthInfo: "alice"}},
	}
	out, err := proxyKubeconfig(raw, "", []string{"c1", "c2", "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if out.CurrentContext != "c1" || len(out.Contexts) != 2 {
		t.Fatalf("contexts %v, current %q; want c1 and c2, c1 current", out.Contexts, out.CurrentContext)
	}
	if got, want := out.Clusters["c2"].Server, "https://127.0.0.1:6443/apis/proxy.flotilla.io/v1/clusters/c2/proxy"; got != want {
		t.Errorf("server %q, want %q", got, want)
	}
	if string(out.Clusters["c2"].CertificateAuthorityData) != "ca" {
		t.Errorf("the hub CA was not kept")
	}
	if u := out.AuthInfos[out.Contexts["c1"].AuthInfo]; u == nil || u.Token != "t" {
		t.Errorf("the hub credentials were not kept: %+v", u)
	}
	for _, ctx := range []string{"nope", "other"} {
		if _, err := proxyKubeconfig(raw, ctx, []string{"c1"}); err == nil {
			t.Errorf("context %q: want an error", ctx)
		}
	}
}
