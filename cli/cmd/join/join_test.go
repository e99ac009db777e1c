package join

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/internal/addon"
)

func TestParseHubServers(t *testing.T) {
	const apiServer = "https://192.0.2.11:6443"
	tests := []struct {
		servers []string
		want    []string
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"192.0.2.12:6443", "hub-3.example.com:6443"}, []string{"192.0.2.12:6443", "hub-3.example.com:6443"}, ""},
		{[]string{"https://192.0.2.12:6443", " 192.0.2.13:6443 "}, []string{"192.0.2.12:6443", "192.0.2.13:6443"}, ""},
		{[]string{"https://hub-2.example.com"}, []string{"hub-2.example.com:443"}, ""},
		{[]string{"[2001:db8::2]:6443"}, []string{"[2001:db8::2]:6443"}, ""},
		{[]string{"192.0.2.12"}, nil, "is not host:port"},
		{[]string{""}, nil, "is not host:port"},
		{[]string{"192.0.2.12:http"}, nil, "is not a port number"},
		{[]string{"192.0.2.12:70000"}, nil, "is not a port number"},
		{[]string{"hub_2:6443"}, nil, "neither an IP address nor a DNS name"},
		{[]string{"http://192.0.2.12:6443"}, nil, "neither host:port nor an https:// URL"},
		{[]string{"https://192.0.2.12:6443/api"}, nil, "neither host:port nor an https:// URL"},
		{[]string{"192.0.2.12:6443", "https://192.0.2.12:6443"}, nil, "names 192.0.2.12:6443 twice"},
		{[]string{"192.0.2.11:6443"}, nil, "is the --hub-apiserver address already"},
	}
	for _, tt := range tests {
		got, err := handshake.ParseHubServers(apiServer, tt.servers)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.servers, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: %q, %v; want %q", tt.servers, got, err, tt.want)
		}
	}
	if _, err := handshake.ParseHubServers("https://hub.example.com", []string{"hub.example.com:443"}); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("the default https port of --hub-apiserver: %v, want the duplicate refused", err)
	}
}

// TestJoinValidatesHubServers: join refuses a bad --hub-server before it
// contacts anything, and keeps the host:port list for the agent.
func TestJoinValidatesHubServers(t *testing.T) {
	o := &joinOptions{hubToken: "abcdef.0123456789abcdef", hubAPIServer: "https://192.0.2.11:6443", clusterName: "cluster1",
		image: "flotilla-agent:test", output: cmdutil.OutputYAML, timeout: time.Minute, certExpiration: agent.DefaultCertificateExpiration, leaseDuration: 60}
	o.hubServers = []string{"192.0.2.12:6443", "https://192.0.2.13:6443"}
	if _, err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"192.0.2.12:6443", "192.0.2.13:6443"}; !slices.Equal(o.servers, want) {
		t.Errorf("servers %q, want %q", o.servers, want)
	}
	o.hubServers = []string{"192.0.2.12"}
	if _, err := o.validate(); err == nil || !strings.Contains(err.Error(), "--hub-server") {
		t.Errorf("bad --hub-server: %v", err)
	}
}

// TestAgentObjectsHubServers: the Deployment join installs runs the agent
// with --hub-server listing the hub's other addresses, and without it when
// there are none.
func TestAgentObjectsHubServers(t *testing.T) {
	argsOf := func(servers []string) []string {
		t.Helper()
		objs, err := handshake.AgentObjects(handshake.AgentInstall{Cluster: "cluster1", Image: "flotilla-agent:test", LeaseDurationSeconds: 60,
			CertExpiration: agent.DefaultCertificateExpiration, HubServers: servers}, []byte("kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetObjectKind().GroupVersionKind().Kind != "Deployment" {
				continue
			}
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.(*unstructured.Unstructured).Object, d); err != nil {
				t.Fatal(err)
			}
			return d.Spec.Template.Spec.Containers[0].Args
		}
		t.Fatalf("no Deployment among %d objects", len(objs))
		return nil
	}
	args := argsOf([]string{"192.0.2.12:6443", "192.0.2.13:6443"})
	if !slices.Contains(args, "--hub-server=192.0.2.12:6443,192.0.2.13:6443") || !slices.Contains(args, "--cluster-name=cluster1") {
		t.Errorf("agent args %q, want --hub-server=192.0.2.12:6443,192.0.2.13:6443", args)
	}
	for _, a := range argsOf(nil) {
		if strings.HasPrefix(a, "--hub-server") {
			t.Errorf("no further hub address, yet %s", a)
		}
	}
}

// TestAgentObjectsUserAddOnNamespace: join makes the add-ons' namespace,
// labelled as the chart's, unless a user made it: then it renders no
// Namespace for it (so unjoin leaves it), and still the agent's Role there.
func TestAgentObjectsUserAddOnNamespace(t *testing.T) {
	rendered := func(user bool) (ns, role bool) {
		t.Helper()
		objs, err := handshake.AgentObjects(handshake.AgentInstall{Cluster: "cluster1", Image: "flotilla-agent:test", LeaseDurationSeconds: 60,
			CertExpiration: agent.DefaultCertificateExpiration, UserAddOnNamespace: user}, []byte("kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			switch kind := o.GetObjectKind().GroupVersionKind().Kind; {
			case kind == "Namespace" && o.GetName() == addon.DefaultInstallNamespace:
				ns = o.GetLabels()["app.kubernetes.io/name"] == handshake.AgentName
			case kind == "Role" && o.GetNamespace() == addon.DefaultInstallNamespace:
				role = true
			}
		}
		return ns, role
	}
	if ns, role := rendered(false); !ns || !role {
		t.Errorf("join's own add-ons' namespace: labelled Namespace %v, Role %v; want both", ns, role)
	}
	if ns, role := rendered(true); ns || !role {
		t.Errorf("a user's add-ons' namespace: Namespace %v, Role %v; want the Role alone", ns, role)
	}
}
