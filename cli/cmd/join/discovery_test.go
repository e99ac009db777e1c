package join

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/cluster-bootstrap/token/jws"

	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

func TestVerifyClusterInfo(t *testing.T) {
	tok := handshake.BootstrapToken{ID: "abcdef", Secret: "0123456789abcdef"}
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	kubeconfig := func(ca []byte) string {
		kc := clientcmdapi.NewConfig()
		kc.Clusters[""] = &clientcmdapi.Cluster{Server: "https://hub:6443", CertificateAuthorityData: ca}
		data, err := clientcmd.Write(*kc)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	sign := func(content, id, secret string) string {
		sig, err := jws.ComputeDetachedSignature(content, id, secret)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	good := kubeconfig(ca)
	tests := []struct {
		name       string
		data       map[string]string
		wantErr    string
		wantOthers int // for unsigned cluster-info
	}{
		{name: "signed for the token", data: map[string]string{"kubeconfig": good, "jws-kubeconfig-abcdef": sign(good, "abcdef", tok.Secret)}},
		{name: "signed with another secret", data: map[string]string{"kubeconfig": good, "jws-kubeconfig-abcdef": sign(good, "abcdef", "ffffffffffffffff")}, wantErr: "does not match"},
		{name: "content changed after signing", data: map[string]string{"kubeconfig": kubeconfig([]byte("evil")), "jws-kubeconfig-abcdef": sign(good, "abcdef", tok.Secret)}, wantErr: "does not match"},
		{name: "signed for other tokens only", data: map[string]string{"kubeconfig": good, "jws-kubeconfig-zzzzzz": sign(good, "zzzzzz", tok.Secret)}, wantErr: "not signed", wantOthers: 1},
		{name: "unsigned", data: map[string]string{"kubeconfig": good}, wantErr: "not signed"},
		{name: "no kubeconfig", data: map[string]string{}, wantErr: "holds no"},
		{name: "no CA", data: map[string]string{"kubeconfig": kubeconfig(nil), "jws-kubeconfig-abcdef": sign(kubeconfig(nil), "abcdef", tok.Secret)}, wantErr: "no CA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, server, err := verifyClusterInfo(&corev1.ConfigMap{Data: tt.data}, tok)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(ca) || server != "https://hub:6443" {
					t.Fatalf("got CA %q and server %q", got, server)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error mentioning %q", err, tt.wantErr)
			}
			var unsigned *unsignedError
			if errors.As(err, &unsigned) && unsigned.others != tt.wantOthers {
				t.Fatalf("others = %d, want %d", unsigned.others, tt.wantOthers)
			}
		})
	}
}
