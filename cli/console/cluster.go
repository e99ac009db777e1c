package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// clusterData is the cluster view's model.
type clusterData struct {
	Row        clusterRow
	Conditions []metav1.Condition
	Works      []workView
	// WorksVisible: the caller may see the ManifestWorks of its namespace.
	WorksVisible    bool
	Policies        []policyRow
	PoliciesVisible bool
	Events          []corev1.Event
	EventsError     string
	// Services are the cluster's multi-cluster services: its exports and
	// its set's imports.
	Services servicesData
	// AddOns are the add-ons on the cluster.
	AddOns clusterAddOns
}

// workView is one ManifestWork with its manifests' states.
type workView struct {
	Name      string
	Applied   string
	Available string
	Degraded  string
	Manifests []manifestView
}

// manifestView is one manifest of a work as the agent reports it.
type manifestView struct {
	Kind, Namespace, Name string
	Applied, Available    string
	Feedback              []string
	Drift                 string
	DriftFields           string
	Message               string
}

// policyRow is a replicated policy on a cluster.
type policyRow struct {
	Root, RootNamespace, RootName, Namespace, Name, Compliant, Message string
}

func (s *server) cluster(r *http.Request) (*page, error) {
	name := r.PathValue("name")
	mc := &clusterv1.ManagedCluster{}
	if !s.store.visibleIn(kindClusters, "") || s.store.cache.Get(r.Context(), client.ObjectKey{Name: name}, mc) != nil {
		return nil, fmt.Errorf("cluster %s: no such ManagedCluster, or your hub RBAC does not let you see it", name)
	}
	d := &clusterData{Row: s.clusterRow(mc, s.clusterSets(r)), Conditions: mc.Status.Conditions}
	if s.store.visibleIn(kindWorks, name) {
		d.WorksVisible = true
		works := &workv1.ManifestWorkList{}
		s.store.list(r.Context(), kindWorks, works, client.InNamespace(name))
		for i := range works.Items {
			d.Works = append(d.Works, viewWork(&works.Items[i]))
		}
		slices.SortFunc(d.Works, func(a, b workView) int { return strings.Compare(a.Name, b.Name) })
	}
	if s.store.visibleIn(kindPolicies, name) {
		d.PoliciesVisible = true
		pols := &policyv1.PolicyList{}
		s.store.list(r.Context(), kindPolicies, pols, client.InNamespace(name), client.HasLabels{policyv1.RootPolicyLabel})
		for _, p := range pols.Items {
			root := p.Labels[policyv1.RootPolicyLabel]
			rootNS, rootName, _ := strings.Cut(root, ".")
			d.Policies = append(d.Policies, policyRow{Root: root, RootNamespace: rootNS, RootName: rootName, Namespace: p.Namespace, Name: p.Name, Compliant: string(p.Status.ComplianceState), Message: lastMessage(&p)})
		}
		slices.SortFunc(d.Policies, func(a, b policyRow) int { return strings.Compare(a.Root, b.Root) })
	}
	d.Services = s.clusterServices(r.Context(), mc)
	d.AddOns = s.clusterAddOnsOf(r.Context(), name)
	evs, err := s.store.events(r.Context(), name)
	if err != nil {
		d.EventsError = err.Error()
	}
	slices.SortFunc(evs, func(a, b corev1.Event) int { return eventTime(b).Compare(eventTime(a).Time) })
	d.Events = evs[:min(len(evs), 50)]
	return &page{Title: "Cluster " + name, Section: "fleet", Data: d}, nil
}

func eventTime(e corev1.Event) metav1.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp
	}
	if !e.EventTime.IsZero() {
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.CreationTimestamp
}

func viewWork(w *workv1.ManifestWork) workView {
	v := workView{
		Name:      w.Name,
		Applied:   condition(w.Status.Conditions, workv1.WorkApplied),
		Available: condition(w.Status.Conditions, workv1.WorkAvailable),
		Degraded:  condition(w.Status.Conditions, workv1.WorkDegraded),
	}
	for _, m := range w.Status.ResourceStatus.Manifests {
		mv := manifestView{
			Kind: m.ResourceMeta.Kind, Namespace: m.ResourceMeta.Namespace, Name: m.ResourceMeta.Name,
			Applied:   condition(m.Conditions, workv1.ManifestApplied),
			Available: condition(m.Conditions, workv1.ManifestAvailable),
			Drift:     "none",
		}
		for _, c := range m.Conditions {
			if c.Status != metav1.ConditionTrue && c.Message != "" {
				mv.Message = c.Type + ": " + c.Message
			}
		}
		for _, f := range m.StatusFeedback.Values {
			mv.Feedback = append(mv.Feedback, f.Name+"="+fieldValue(f.Value))
		}
		if dr := m.Drift; dr != nil {
			mv.Drift = fmt.Sprintf("put back %d time(s), last %s", dr.Corrections, ago(dr.LastCorrectedTime))
			mv.DriftFields = strings.Join(dr.Fields, ", ")
			if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestDrifted); c != nil && c.Status == metav1.ConditionTrue {
				mv.Drift = "drifted, not corrected: " + c.Message
			}
		}
		v.Manifests = append(v.Manifests, mv)
	}
	return v
}

func fieldValue(v workv1.FieldValue) string {
	switch {
	case v.Integer != nil:
		return fmt.Sprint(*v.Integer)
	case v.String != nil:
		return *v.String
	case v.Boolean != nil:
		return fmt.Sprint(*v.Boolean)
	case v.JSONRaw != nil:
		return *v.JSONRaw
	}
	return ""
}

// lastMessage is the newest compliance message of a replicated policy.
func lastMessage(p *policyv1.Policy) string {
	var msgs []string
	for _, d := range p.Status.Details {
		if len(d.History) > 0 {
			msgs = append(msgs, d.History[0].Message)
		}
	}
	return strings.Join(msgs, "; ")
}
