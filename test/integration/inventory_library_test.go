package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// inventoryDoc is the user guide whose examples the inventory specs run.
const inventoryDoc = "../../docs/inventory.md"

// docBlock returns the fenced code block of docs/inventory.md that follows
// the line "<!-- tested: name -->", so that a spec runs what a reader
// copies.
func docBlock(name string) string {
	GinkgoHelper()
	data, err := os.ReadFile(inventoryDoc)
	Expect(err).NotTo(HaveOccurred())
	marker := "<!-- tested: " + name + " -->"
	_, rest, found := strings.Cut(string(data), marker)
	Expect(found).To(BeTrue(), "%s has no %q", inventoryDoc, marker)
	_, rest, found = strings.Cut(rest, "```")
	Expect(found).To(BeTrue(), "no code block after %q", marker)
	_, rest, _ = strings.Cut(rest, "\n") // the fence's language
	block, _, found := strings.Cut(rest, "```")
	Expect(found).To(BeTrue(), "the code block after %q does not end", marker)
	return block
}

// decodeYAMLObjects splits a YAML stream into objects.
func decodeYAMLObjects(stream string) []client.Object {
	GinkgoHelper()
	var out []client.Object
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(stream), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := d.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		Expect(err).NotTo(HaveOccurred())
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// accessProviders is the file a consumer of sigs.k8s.io/cluster-inventory-api
// gives its access package (--clusterprofile-provider-file): credential
// plugins by access-provider name. The shape is the library's; the code
// below follows what its BuildConfigFromCP does, as that module is not
// available to this repository's builds.
type accessProviders struct {
	Providers []struct {
		Name       string                   `json:"name"`
		ExecConfig *clientcmdapi.ExecConfig `json:"execConfig"`
	} `json:"providers"`
}

// providerFile parses a provider file and points its providers at the
// command given, with extra arguments, as a consumer outside a pod does.
func providerFile(data, command string, extraArgs ...string) *accessProviders {
	GinkgoHelper()
	var p accessProviders
	Expect(json.Unmarshal([]byte(data), &p)).To(Succeed(), "the provider file:\n%s", data)
	Expect(p.Providers).NotTo(BeEmpty())
	for _, pr := range p.Providers {
		Expect(pr.ExecConfig).NotTo(BeNil(), "provider %s has no execConfig", pr.Name)
		Expect(pr.ExecConfig.Command).To(Equal("flotilla"), "provider %s", pr.Name)
		pr.ExecConfig.Command = command
		pr.ExecConfig.Args = append(pr.ExecConfig.Args, extraArgs...)
	}
	return &p
}

// restConfig builds the client configuration of a ClusterProfile as the
// library does: the first provider of the file that the profile offers,
// the profile's cluster (server, CA), and the provider's exec plugin with
// the cluster's client.authentication.k8s.io/exec extension as its
// config.
func (p *accessProviders) restConfig(profile *unstructured.Unstructured) (*rest.Config, error) {
	offered := map[string]map[string]any{}
	list, _, _ := unstructured.NestedSlice(profile.Object, "status", "accessProviders")
	for _, raw := range list {
		ap, _ := raw.(map[string]any)
		name, _ := ap["name"].(string)
		cluster, _ := ap["cluster"].(map[string]any)
		offered[name] = cluster
	}
	for _, pr := range p.Providers {
		raw, ok := offered[pr.Name]
		if !ok {
			continue
		}
		// The provider's cluster is a kubeconfig cluster: load it as one.
		kc, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Config", "clusters": []any{map[string]any{"name": "c", "cluster": raw}}})
		if err != nil {
			return nil, err
		}
		loaded, err := clientcmd.Load(kc)
		if err != nil {
			return nil, fmt.Errorf("ClusterProfile %s: provider %s: %w", profile.GetName(), pr.Name, err)
		}
		cluster := loaded.Clusters["c"]
		exec := *pr.ExecConfig
		exec.InteractiveMode = clientcmdapi.NeverExecInteractiveMode
		exec.Config = cluster.Extensions["client.authentication.k8s.io/exec"]
		return &rest.Config{Host: cluster.Server, TLSClientConfig: rest.TLSClientConfig{CAData: cluster.CertificateAuthorityData}, ExecProvider: &exec}, nil
	}
	return nil, fmt.Errorf("ClusterProfile %s offers none of the file's providers", profile.GetName())
}
