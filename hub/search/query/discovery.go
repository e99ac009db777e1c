package query

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// clusterScoped are the well-known resources without a namespace; a
// SearchResource does not say, and any other is taken as namespaced.
var clusterScoped = []string{
	"nodes", "namespaces", "persistentvolumes", "storageclasses", "clusterroles", "clusterrolebindings",
	"customresourcedefinitions", "ingressclasses", "priorityclasses", "runtimeclasses", "csidrivers", "csinodes",
	"volumeattachments", "mutatingwebhookconfigurations", "validatingwebhookconfigurations", "apiservices",
}

// shortNames are kubectl's usual short names of well-known resources.
var shortNames = map[string][]string{
	"pods": {"po"}, "deployments": {"deploy"}, "statefulsets": {"sts"}, "daemonsets": {"ds"},
	"services": {"svc"}, "ingresses": {"ing"}, "nodes": {"no"}, "namespaces": {"ns"}, "configmaps": {"cm"},
	"replicasets": {"rs"}, "persistentvolumeclaims": {"pvc"}, "persistentvolumes": {"pv"},
	"serviceaccounts": {"sa"}, "cronjobs": {"cj"}, "endpoints": {"ep"}, "events": {"ev"},
}

func coreVersions(indexed []searchv1alpha1.SearchResource) *metav1.APIVersions {
	v := &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{}}
	for _, r := range indexed {
		if r.Group == "" && !slices.Contains(v.Versions, r.Version) {
			v.Versions = append(v.Versions, r.Version)
		}
	}
	return v
}

func groupList(indexed []searchv1alpha1.SearchResource) *metav1.APIGroupList {
	l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, r := range indexed {
		if r.Group == "" || slices.ContainsFunc(l.Groups, func(g metav1.APIGroup) bool { return g.Name == r.Group }) {
			continue
		}
		g, _ := group(indexed, r.Group)
		l.Groups = append(l.Groups, *g)
	}
	return l
}

func group(indexed []searchv1alpha1.SearchResource, name string) (*metav1.APIGroup, bool) {
	g := &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: name}
	for _, r := range indexed {
		if r.Group != name || slices.ContainsFunc(g.Versions, func(v metav1.GroupVersionForDiscovery) bool { return v.Version == r.Version }) {
			continue
		}
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + r.Version, Version: r.Version})
	}
	if len(g.Versions) == 0 {
		return nil, false
	}
	g.PreferredVersion = g.Versions[0]
	return g, true
}

func resourceList(indexed []searchv1alpha1.SearchResource, gv schema.GroupVersion) *metav1.APIResourceList {
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, r := range indexed {
		if r.Group != gv.Group || r.Version != gv.Version {
			continue
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name: r.Resource, SingularName: strings.ToLower(r.Kind), Kind: r.Kind,
			Namespaced: !slices.Contains(clusterScoped, r.Resource), Verbs: metav1.Verbs{"get", "list"},
			ShortNames: shortNames[r.Resource],
		})
	}
	return l
}

// wantsTable says whether r asks for a Table, as kubectl get does.
func wantsTable(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if strings.Contains(part, "as=Table") {
			return true
		}
	}
	return false
}

// tableColumns are kubectl get's columns; -o wide shows those of priority 1.
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Cluster", Type: "string", Description: "The managed cluster the object is in."},
	{Name: "Name", Type: "string", Format: "name", Description: "The object's name."},
	{Name: "Status", Type: "string", Description: "The index's one-word status."},
	{Name: "Age", Type: "string", Description: "Time since the object was created."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Container images."},
	{Name: "Owner", Type: "string", Priority: 1, Description: "The object's controller."},
}

// table is a page of items as a Table with their metadata (includeObject
// None: without it; Object: the whole object).
func table(items []searchv1alpha1.SearchItem, cont, includeObject string) (*metav1.Table, error) {
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ListMeta:          metav1.ListMeta{Continue: cont},
		ColumnDefinitions: tableColumns,
		Rows:              []metav1.TableRow{},
	}
	for _, it := range items {
		row := metav1.TableRow{Cells: []any{it.Cluster, it.Name, orNone(it.Status), Age(it.CreationTimestamp.Time, time.Now()), orNone(strings.Join(it.Images, ",")), orNone(OwnerString(it.Owner))}}
		var obj any
		switch includeObject {
		case "None":
		case "Object":
			obj = kubeObject(it)
		default:
			obj = &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
				ObjectMeta: objectMeta(it),
			}
		}
		if obj != nil {
			raw, err := json.Marshal(obj)
			if err != nil {
				return nil, err
			}
			row.Object = runtime.RawExtension{Raw: raw}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// Age is the time since created as kubectl prints it.
func Age(created, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}

// OwnerString is an owner as Kind/name.
func OwnerString(o *searchv1alpha1.Owner) string {
	if o == nil {
		return ""
	}
	return o.Kind + "/" + o.Name
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
