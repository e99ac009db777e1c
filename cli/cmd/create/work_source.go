package create

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/work"
)

// workSource is what `create work -f` read: the spec to give each
// cluster's ManifestWork.
type workSource struct {
	// spec is the ManifestWork's spec as found, or the manifests wrapped.
	spec workv1.ManifestWorkSpec
	// labels and annotations of a ManifestWork file, kept on each copy.
	labels, annotations map[string]string
	// fromWork records that the file held a ManifestWork (or a
	// ManifestWorkReplicaSet, whose template spec is then the spec).
	fromWork bool
	// replicaSet is the spec of a ManifestWorkReplicaSet file, nil for others.
	replicaSet *workv1alpha1.ManifestWorkReplicaSetSpec
	// namespace is the metadata.namespace of a ManifestWorkReplicaSet file.
	namespace string
	// where names manifest i in messages.
	where func(i int) string
}

// typeHead is the part of a document that says what it is.
type typeHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// readWorkSource reads -f: a file, or standard input for "-".
func readWorkSource(path string, stdin io.Reader) (*workSource, error) {
	if path == "" {
		return nil, errors.New("-f is required: a file of Kubernetes manifests (or a ManifestWork), or - for standard input")
	}
	name := path
	var data []byte
	var err error
	if path == "-" {
		name = "standard input"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // the path is in the message already
		}
		return nil, fmt.Errorf("cannot read -f %s: %w", path, err)
	}
	return parseWorkSource(name, data)
}

// parseWorkSource makes sense of the documents of name: either one
// ManifestWork, or any number of Kubernetes objects (a v1 List counts as
// its items). The manifests are checked as the hub's admission checks
// them, so that mistakes are named by document before anything is sent.
func parseWorkSource(name string, data []byte) (*workSource, error) {
	docs, err := splitDocuments(name, data)
	if err != nil {
		return nil, err
	}
	src := &workSource{}
	var docOf []int // document number of each manifest
	for i, doc := range docs {
		var head typeHead
		if err := json.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("%s: document %d is not a Kubernetes object (a YAML or JSON map): %w", name, i+1, err)
		}
		switch {
		case head.Kind == "ManifestWork" && head.APIVersion == workv1.GroupVersion.String():
			if len(docs) > 1 {
				return nil, fmt.Errorf("%s: document %d is a ManifestWork, but the file holds %d documents: give either one ManifestWork or plain Kubernetes manifests", name, i+1, len(docs))
			}
			mw := &workv1.ManifestWork{}
			if err := yaml.UnmarshalStrict(doc, mw); err != nil {
				return nil, fmt.Errorf("%s: the ManifestWork does not match %s: %w", name, workv1.GroupVersion, err)
			}
			src.spec, src.labels, src.annotations, src.fromWork = mw.Spec, mw.Labels, mw.Annotations, true
			src.where = func(i int) string { return fmt.Sprintf("spec.workload.manifests[%d] of %s", i, name) }
		case head.Kind == "ManifestWorkReplicaSet" && head.APIVersion == workv1alpha1.GroupVersion.String():
			if len(docs) > 1 {
				return nil, fmt.Errorf("%s: document %d is a ManifestWorkReplicaSet, but the file holds %d documents: give either one ManifestWorkReplicaSet or plain Kubernetes manifests", name, i+1, len(docs))
			}
			rs := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := yaml.UnmarshalStrict(doc, rs); err != nil {
				return nil, fmt.Errorf("%s: the ManifestWorkReplicaSet does not match %s: %w", name, workv1alpha1.GroupVersion, err)
			}
			src.spec, src.labels, src.annotations, src.fromWork = rs.Spec.ManifestWorkTemplate, rs.Labels, rs.Annotations, true
			src.replicaSet, src.namespace = &rs.Spec, rs.Namespace
			src.where = func(i int) string {
				return fmt.Sprintf("spec.manifestWorkTemplate.workload.manifests[%d] of %s", i, name)
			}
		case head.Kind == "List" && head.APIVersion == "v1":
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(doc, &list); err != nil {
				return nil, fmt.Errorf("%s: document %d, a List: %w", name, i+1, err)
			}
			for _, item := range list.Items {
				src.spec.Workload.Manifests = append(src.spec.Workload.Manifests, rawManifestOf(item))
				docOf = append(docOf, i+1)
			}
		default:
			src.spec.Workload.Manifests = append(src.spec.Workload.Manifests, rawManifestOf(doc))
			docOf = append(docOf, i+1)
		}
	}
	if !src.fromWork {
		src.where = func(i int) string {
			if len(docs) == 1 && len(docOf) == 1 {
				return name
			}
			return fmt.Sprintf("document %d of %s", docOf[i], name)
		}
	}
	if len(src.spec.Workload.Manifests) == 0 {
		return nil, fmt.Errorf("%s holds no manifests: give the Kubernetes objects to apply on the clusters, a ManifestWork or a ManifestWorkReplicaSet", name)
	}
	if problems := work.Validate(src.spec.Workload.Manifests); len(problems) > 0 {
		return nil, fmt.Errorf("the hub would refuse this work: %s", work.Describe(problems, src.where))
	}
	return src, nil
}

// splitDocuments returns the YAML (or JSON) documents of data as JSON,
// skipping empty ones.
func splitDocuments(name string, data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read document %d: %w", name, n, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d is not valid YAML: %w", name, n, err)
		}
		if s := strings.TrimSpace(string(js)); s == "null" || s == "" {
			n-- // comments or nothing between separators: not a document
			continue
		}
		docs = append(docs, js)
	}
}

func rawManifestOf(data []byte) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}}
}
