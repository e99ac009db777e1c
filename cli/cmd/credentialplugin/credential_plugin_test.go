package credentialplugin

import (
	"strings"
	"testing"
)

func TestReadExecInfo(t *testing.T) {
	req, cfg, err := readExecInfo(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":"https://hub:6443/apis/proxy.flotilla.io/v1/clusters/c1/proxy","config":{"clusterName":"c1","hub":"https://hub:6443"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClusterName != "c1" || cfg.Hub != "https://hub:6443" {
		t.Errorf("config %+v", cfg)
	}
	if req.APIVersion != "client.authentication.k8s.io/v1" || req.Kind != "ExecCredential" || req.Spec.Cluster != nil {
		t.Errorf("the answer's head %+v", req)
	}

	req, _, err = readExecInfo("")
	if err != nil || req.APIVersion != "client.authentication.k8s.io/v1" || req.Kind != "ExecCredential" {
		t.Errorf("without KUBERNETES_EXEC_INFO: %+v, %v", req, err)
	}
	if _, _, err := readExecInfo(`{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential"}`); err == nil || !strings.Contains(err.Error(), "speaks client.authentication.k8s.io/v1") {
		t.Errorf("v1beta1: %v", err)
	}
	if _, _, err := readExecInfo(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"x","config":["not an object"]}}}`); err == nil {
		t.Error("a foreign config was accepted")
	}
}
