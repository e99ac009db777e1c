package query

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/search"
)

// ClusterAnnotation names, on every object the resources paths return,
// the cluster it was found in.
const ClusterAnnotation = "search.flotilla.io/cluster"

// StatusAnnotation and ImagesAnnotation carry the index's one-word status
// and the images (comma-separated) of an object.
const (
	StatusAnnotation = "search.flotilla.io/status"
	ImagesAnnotation = "search.flotilla.io/images"
)

// kube serves rest, a path below search.ResourcesPrefix, in the shape of
// the Kubernetes API: [clusters/<c>[,<c>…]/] then api, api/v1, apis,
// apis/<g>, apis/<g>/<v>, and lists and gets of the indexed resources.
func (h *handler) kube(w http.ResponseWriter, r *http.Request, rest string) {
	var pinned []string
	if after, ok := strings.CutPrefix(rest, "clusters/"); ok {
		list, tail, _ := strings.Cut(after, "/")
		if list == "" {
			h.fail(w, r, apierrors.NewBadRequest("name the clusters after clusters/: "+search.ResourcesPrefix+"clusters/<cluster>[,<cluster>…]/api/v1/pods"))
			return
		}
		pinned, rest = strings.Split(list, ","), tail
	}
	indexed, err := h.resources(r.Context())
	if err != nil {
		h.fail(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("cannot tell which resources are indexed: %v", err)))
		return
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	var gv schema.GroupVersion
	switch {
	case len(parts) == 1 && parts[0] == "api":
		writeJSON(w, coreVersions(indexed))
		return
	case len(parts) == 1 && parts[0] == "apis":
		writeJSON(w, groupList(indexed))
		return
	case len(parts) == 2 && parts[0] == "apis":
		g, ok := group(indexed, parts[1])
		if !ok {
			h.fail(w, r, apierrors.NewNotFound(schema.GroupResource{Group: parts[1]}, ""))
			return
		}
		writeJSON(w, g)
		return
	case len(parts) >= 2 && parts[0] == "api":
		gv, parts = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		gv, parts = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		h.fail(w, r, apierrors.NewNotFound(searchResource, search.ResourcesPrefix+rest))
		return
	}
	if len(parts) == 0 {
		list := resourceList(indexed, gv)
		if len(list.APIResources) == 0 {
			h.fail(w, r, apierrors.NewNotFound(schema.GroupResource{Group: gv.Group}, gv.Version))
			return
		}
		writeJSON(w, list)
		return
	}
	req, err := parseResourcePath(parts)
	if err != nil {
		h.fail(w, r, apierrors.NewNotFound(searchResource, search.ResourcesPrefix+rest))
		return
	}
	h.list(w, r, indexed, gv, req, pinned)
}

// resourcePath is a list or get of one resource.
type resourcePath struct {
	namespace, resource, name string
}

func parseResourcePath(parts []string) (resourcePath, error) {
	var p resourcePath
	if len(parts) >= 3 && parts[0] == "namespaces" {
		p.namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		p.resource = parts[0]
	case 2:
		p.resource, p.name = parts[0], parts[1]
	default:
		return p, fmt.Errorf("search serves lists and gets, no subresources")
	}
	return p, nil
}

// list answers a list or a get: a <Kind>List, the object, or a Table.
func (h *handler) list(w http.ResponseWriter, r *http.Request, indexed []searchv1alpha1.SearchResource, gv schema.GroupVersion, p resourcePath, pinned []string) {
	gr := schema.GroupResource{Group: gv.Group, Resource: p.resource}
	i := slices.IndexFunc(indexed, func(s searchv1alpha1.SearchResource) bool {
		return s.Group == gv.Group && s.Version == gv.Version && s.Resource == p.resource
	})
	if i < 0 {
		h.fail(w, r, statusError(http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s of %s is not indexed by search: to index it, add it to spec.resources of SearchConfig %s", p.resource, groupVersionName(gv), searchv1alpha1.DefaultConfigName)))
		return
	}
	res := indexed[i]
	params := r.URL.Query()
	if watch := params.Get("watch"); watch == "true" || watch == "1" {
		h.fail(w, r, statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "search does not watch: list again, or watch the cluster itself through the hub (flotilla kubeconfig --cluster <cluster>)"))
		return
	}
	t := Terms{Clusters: pinned}
	if c := params.Get("clusters"); c != "" {
		t.Clusters = intersect(pinned, strings.Split(c, ","))
	}
	t.Query.Groups, t.Query.Resources = []string{gv.Group}, []string{p.resource}
	if p.namespace != "" {
		t.Query.Namespaces = []string{p.namespace}
	}
	if p.name != "" {
		t.Query.Names = []string{p.name}
	}
	if err := selectors(params.Get("labelSelector"), params.Get("fieldSelector"), &t); err != nil {
		h.fail(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	if err := pageParams(params.Get("limit"), params.Get("continue"), &t.Query); err != nil {
		h.fail(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	page, err := h.query(r.Context(), t)
	if err != nil {
		h.fail(w, r, storeError(err))
		return
	}
	if p.name != "" && len(page.Items) == 0 {
		h.fail(w, r, apierrors.NewNotFound(gr, p.name))
		return
	}
	if wantsTable(r) {
		t, err := table(page.Items, page.Continue, params.Get("includeObject"))
		if err != nil {
			h.fail(w, r, apierrors.NewInternalError(err))
			return
		}
		writeJSON(w, t)
		return
	}
	if p.name == "" {
		items := make([]map[string]any, len(page.Items))
		for i, it := range page.Items {
			items[i] = kubeObject(it)
		}
		writeJSON(w, map[string]any{
			"apiVersion": gv.String(), "kind": res.Kind + "List",
			"metadata": metav1.ListMeta{Continue: page.Continue}, "items": items,
		})
		return
	}
	if len(page.Items) > 1 {
		var clusters []string
		for _, it := range page.Items {
			clusters = append(clusters, it.Cluster)
		}
		h.fail(w, r, apierrors.NewConflict(gr, p.name, fmt.Errorf("found in clusters %s: pin one with %sclusters/<cluster>/…", strings.Join(clusters, ", "), search.ResourcesPrefix)))
		return
	}
	writeJSON(w, kubeObject(page.Items[0]))
}

// selectors reads a label selector and a field selector (equality only:
// the index holds selected fields' values) into t.
func selectors(labelSelector, fieldSelector string, t *Terms) error {
	if labelSelector != "" {
		sel, err := labels.Parse(labelSelector)
		if err != nil {
			return fmt.Errorf("labelSelector %q: %w", labelSelector, err)
		}
		reqs, _ := sel.Requirements()
		t.Query.Labels = reqs
	}
	if fieldSelector != "" {
		sel, err := fields.ParseSelector(fieldSelector)
		if err != nil {
			return fmt.Errorf("fieldSelector %q: %w", fieldSelector, err)
		}
		t.Query.Fields = map[string]string{}
		for _, req := range sel.Requirements() {
			if req.Operator != selection.Equals && req.Operator != selection.DoubleEquals {
				return fmt.Errorf("fieldSelector %q: search matches fields by = only (%s%s%s)", fieldSelector, req.Field, req.Operator, req.Value)
			}
			t.Query.Fields[req.Field] = req.Value
		}
	}
	return nil
}

// intersect is b narrowed to a (a nil: b).
func intersect(a, b []string) []string {
	if a == nil {
		return b
	}
	out := []string{}
	for _, c := range b {
		if slices.Contains(a, c) {
			out = append(out, c)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// kubeObject is an indexed object as the Kubernetes API would show it,
// with what the index holds: metadata, the selected fields at their paths,
// and the cluster, status and images in annotations.
func kubeObject(it searchv1alpha1.SearchItem) map[string]any {
	gv := schema.GroupVersion{Group: it.Group, Version: it.Version}
	obj := map[string]any{"apiVersion": gv.String(), "kind": it.Kind, "metadata": objectMeta(it)}
	for path, v := range it.Fields {
		setPath(obj, strings.Split(path, "."), v)
	}
	return obj
}

func objectMeta(it searchv1alpha1.SearchItem) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name: it.Name, Namespace: it.Namespace, UID: it.UID, ResourceVersion: it.ResourceVersion,
		CreationTimestamp: it.CreationTimestamp, Labels: it.Labels,
		Annotations: map[string]string{ClusterAnnotation: it.Cluster},
	}
	if it.Status != "" {
		m.Annotations[StatusAnnotation] = it.Status
	}
	if len(it.Images) > 0 {
		m.Annotations[ImagesAnnotation] = strings.Join(it.Images, ",")
	}
	if it.Owner != nil {
		controller := true
		m.OwnerReferences = []metav1.OwnerReference{{Kind: it.Owner.Kind, Name: it.Owner.Name, UID: it.Owner.UID, Controller: &controller}}
	}
	return m
}

// setPath sets obj's field at path to v, unless a field on the way is
// not an object (metadata is the index's own).
func setPath(obj map[string]any, path []string, v string) {
	if len(path) == 0 || path[0] == "metadata" || path[0] == "apiVersion" || path[0] == "kind" {
		return
	}
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			if _, taken := obj[p]; taken {
				return
			}
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}

func statusError(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}

// groupVersionName is gv as a person reads it: v1 is the core group's.
func groupVersionName(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "core " + gv.Version
	}
	return gv.String()
}
