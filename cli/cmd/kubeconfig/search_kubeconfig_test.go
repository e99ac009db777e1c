package kubeconfig

import (
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestSearchKubeconfig(t *testing.T) {
	raw := clientcmdapi.Config{
		CurrentContext: "hub",
		Clusters:       map[string]*clientcmdapi.Cluster{"hub": {Server: "https://127.0.0.1:6443/", CertificateAuthorityData: []byte("ca")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"alice": {Token: "t"}},
		Contexts:       map[string]*clientcmdapi.Context{"hub": {Cluster: "hub", AuthInfo: "alice"}},
	}
	for _, tc := range []struct {
		clusters []string
		want     string
	}{
		{nil, "https://127.0.0.1:6443/apis/search.flotilla.io/v1alpha1/resources"},
		{[]string{"c1", "c2"}, "https://127.0.0.1:6443/apis/search.flotilla.io/v1alpha1/resources/clusters/c1,c2"},
	} {
		out, err := searchKubeconfig(raw, "", tc.clusters)
		if err != nil {
			t.Fatal(err)
		}
		c := out.Clusters[out.Contexts[out.CurrentContext].Cluster]
		if out.CurrentContext != SearchContext || c.Server != tc.want || string(c.CertificateAuthorityData) != "ca" {
			t.Errorf("current %q, server %q; want %q, %q with the hub CA", out.CurrentContext, c.Server, SearchContext, tc.want)
		}
		if u := out.AuthInfos[out.Contexts[SearchContext].AuthInfo]; u == nil || u.Token != "t" {
			t.Errorf("the hub credentials were not kept: %+v", u)
		}
	}
	if _, err := searchKubeconfig(raw, "nope", nil); err == nil {
		t.Error("a missing context: want an error")
	}
}
