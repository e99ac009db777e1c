package manifests

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed hub/crds/*.yaml agent/crds/*.yaml spoke-owner/crds/*.yaml
var files embed.FS

// HubCRDs returns the CRDs the hub serves, sorted by name.
func HubCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return readCRDs("hub/crds")
}

// AgentCRDs returns the CRDs a managed cluster serves, sorted by name.
func AgentCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return readCRDs("agent/crds")
}

// SpokeOwnerCRDs returns the CRDs of APIs that belong to a managed
// cluster's owner rather than to the agent: the About API's
// ClusterProperty. The agent reads them where they are served and installs
// them nowhere; neither does the hub. Tests install them on their spokes.
func SpokeOwnerCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return readCRDs("spoke-owner/crds")
}

// AllCRDs returns the hub's and the agent's CRDs together. The hub installs
// all of them, so that it can also be managed as a cluster of its own.
func AllCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	hub, err := HubCRDs()
	if err != nil {
		return nil, err
	}
	agent, err := AgentCRDs()
	if err != nil {
		return nil, err
	}
	return append(hub, agent...), nil
}

func readCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		data, err := files.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("embedded manifest %s/%s: %w", dir, e.Name(), err)
		}
		crds = append(crds, crd)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}
