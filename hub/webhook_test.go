package hub

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/hub/controlplane"
)

func TestWebhookOptionsComplete(t *testing.T) {
	withFiles := func(names ...string) string {
		dir := t.TempDir()
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tests := []struct {
		name       string
		opts       WebhookOptions
		wantURL    string
		wantBundle string
		wantErr    string
	}{
		{name: "no certificate: not served", opts: WebhookOptions{Port: 9443}},
		{name: "URL without certificate", opts: WebhookOptions{AdvertiseURL: "https://hub:9443"}, wantErr: "--webhook-advertise-url needs --webhook-cert-dir"},
		{name: "defaults to the bind address", opts: WebhookOptions{CertDir: withFiles("tls.crt"), Port: 9443}, wantURL: "https://127.0.0.1:9443", wantBundle: "tls.crt"},
		{name: "every interface advertises loopback", opts: WebhookOptions{CertDir: withFiles("tls.crt"), BindAddress: "0.0.0.0", Port: 9443}, wantURL: "https://127.0.0.1:9443", wantBundle: "tls.crt"},
		{name: "IPv6", opts: WebhookOptions{CertDir: withFiles("tls.crt"), BindAddress: "::1", Port: 9443}, wantURL: "https://[::1]:9443", wantBundle: "tls.crt"},
		{name: "the CA that signed the certificate", opts: WebhookOptions{CertDir: withFiles("tls.crt", "ca.crt"), AdvertiseURL: "https://hub.example.com:443", Port: 9443}, wantURL: "https://hub.example.com:443", wantBundle: "ca.crt"},
		{name: "a given bundle", opts: WebhookOptions{CertDir: withFiles(), CABundle: []byte("given"), Port: 9443}, wantURL: "https://127.0.0.1:9443", wantBundle: "given"},
		{name: "no certificate in the directory", opts: WebhookOptions{CertDir: withFiles(), Port: 9443}, wantErr: "holds neither ca.crt nor tls.crt"},
		{name: "a host name to bind", opts: WebhookOptions{CertDir: withFiles("tls.crt"), BindAddress: "hub", Port: 9443}, wantErr: `--webhook-bind-address "hub" is not an IP address`},
		{name: "not a port", opts: WebhookOptions{CertDir: withFiles("tls.crt"), Port: 70000}, wantErr: "--webhook-port 70000 is not a port number"},
		{name: "plain http", opts: WebhookOptions{CertDir: withFiles("tls.crt"), AdvertiseURL: "http://hub:9443", Port: 9443}, wantErr: "--webhook-advertise-url: \"http://hub:9443\" must be an https://host:port URL"},
		{name: "a path", opts: WebhookOptions{CertDir: withFiles("tls.crt"), AdvertiseURL: "https://hub:9443/validate", Port: 9443}, wantErr: "with no path, query or user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.opts
			err := w.complete()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.AdvertiseURL != tt.wantURL {
				t.Errorf("AdvertiseURL = %q, want %q", w.AdvertiseURL, tt.wantURL)
			}
			if string(w.CABundle) != tt.wantBundle {
				t.Errorf("CABundle = %q, want %q", w.CABundle, tt.wantBundle)
			}
		})
	}
}

func TestWebhookOptionsFreePort(t *testing.T) {
	w := WebhookOptions{CertDir: t.TempDir(), CABundle: []byte("ca")}
	if err := w.complete(); err != nil {
		t.Fatal(err)
	}
	if w.Port == 0 || !strings.HasSuffix(w.AdvertiseURL, ":"+strconv.Itoa(w.Port)) {
		t.Errorf("port %d, URL %q: want a free port in the URL", w.Port, w.AdvertiseURL)
	}
}

func TestRunRefusesATakenWebhookPortBeforeStarting(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(t.TempDir(), "hub")
	opts := Options{
		ControlPlane: controlplane.Options{DataDir: dir},
		Webhook:      WebhookOptions{Port: taken.Addr().(*net.TCPAddr).Port},
	}
	err = Run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "choose another --webhook-port") {
		t.Fatalf("got %v, want a message naming --webhook-port", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the data directory %s exists (%v): the control plane started before the port was checked", dir, err)
	}
}
