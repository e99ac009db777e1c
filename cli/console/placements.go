package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// placementRow is one Placement.
type placementRow struct {
	Namespace, Name string
	Selected        int
	Asked           string
	Satisfied       string
	Message         string
}

// placementsData is the placements view's model.
type placementsData struct {
	Rows    []placementRow
	Visible bool
}

// placementData is one placement: chosen clusters, and why not for others.
type placementData struct {
	Row    placementRow
	Chosen []string
	Others []whyNot
	// ClustersVisible: the caller sees the clusters, so why-not is known.
	ClustersVisible bool
}

// whyNot is a cluster the placement did not choose, with the scheduler's reason.
type whyNot struct {
	Cluster, Health, Why string
}

func (s *server) placements(r *http.Request) (*page, error) {
	d := &placementsData{}
	list := &clusterv1beta1.PlacementList{}
	d.Visible = s.store.list(r.Context(), kindPlacements, list)
	for i := range list.Items {
		d.Rows = append(d.Rows, placementRowOf(&list.Items[i]))
	}
	slices.SortFunc(d.Rows, func(a, b placementRow) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return &page{Title: "Placements", Section: "placements", Data: d}, nil
}

func placementRowOf(p *clusterv1beta1.Placement) placementRow {
	row := placementRow{Namespace: p.Namespace, Name: p.Name, Selected: int(p.Status.NumberOfSelectedClusters), Asked: "all that qualify", Satisfied: "Pending"}
	if p.Spec.NumberOfClusters != nil {
		row.Asked = fmt.Sprint(*p.Spec.NumberOfClusters)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured); c != nil && c.Status == "True" {
		row.Satisfied, row.Message = "Failed", c.Message
		return row
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied); c != nil {
		row.Satisfied, row.Message = map[string]string{"True": "Complete", "False": "Pending"}[string(c.Status)], c.Message
	}
	return row
}

func (s *server) placement(r *http.Request) (*page, error) {
	ctx := r.Context()
	ns, name := r.PathValue("ns"), r.PathValue("name")
	p := &clusterv1beta1.Placement{}
	if s.store.access[kindPlacements.resource].none() || s.store.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p) != nil {
		return nil, fmt.Errorf("Placement %s/%s: not found, or your hub RBAC does not let you see it", ns, name)
	}
	d := &placementData{Row: placementRowOf(p)}
	decisions := &clusterv1beta1.PlacementDecisionList{}
	s.store.list(ctx, kindDecisions, decisions, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name})
	chosen := map[string]bool{}
	for _, pd := range decisions.Items {
		for _, dec := range pd.Status.Decisions {
			chosen[dec.ClusterName] = true
		}
	}
	d.Chosen = sortedKeys(chosen)
	clusters := &clusterv1.ManagedClusterList{}
	d.ClustersVisible = s.store.list(ctx, kindClusters, clusters)
	in := s.schedulingInput(r, p)
	for i := range clusters.Items {
		mc := &clusters.Items[i]
		if chosen[mc.Name] {
			continue
		}
		d.Others = append(d.Others, whyNot{Cluster: mc.Name, Health: health(mc), Why: whyNotChosen(in, mc)})
	}
	slices.SortFunc(d.Others, func(a, b whyNot) int { return strings.Compare(a.Cluster, b.Cluster) })
	return &page{Title: "Placement " + ns + "/" + name, Section: "placements", Data: d}, nil
}

// schedulingInput is what the hub's scheduler read for p, but the clusters.
func (s *server) schedulingInput(r *http.Request, p *clusterv1beta1.Placement) scheduler.Input {
	in := scheduler.Input{Placement: p, Now: time.Now()}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	s.store.list(r.Context(), kindSetBindings, bindings, client.InNamespace(p.Namespace))
	for i := range bindings.Items {
		in.Bindings = append(in.Bindings, &bindings.Items[i])
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	s.store.list(r.Context(), kindClusterSets, sets)
	for i := range sets.Items {
		in.ClusterSets = append(in.ClusterSets, &sets.Items[i])
	}
	return in
}
