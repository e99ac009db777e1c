package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/clusterset"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// TunnelConnectedCondition is the ManagedCluster condition through which
// the cluster proxy reports its tunnel, if it runs.
const TunnelConnectedCondition = tunnel.ConditionConnected

// Health words of a cluster.
const (
	healthAvailable   = "Available"
	healthUnavailable = "Unavailable"
	healthUnknown     = "Unknown"
	healthPending     = "Pending"
	healthDenied      = "Denied"
)

var healths = []string{healthAvailable, healthUnavailable, healthUnknown, healthPending, healthDenied}

// clusterRow is one cluster as the fleet shows it.
type clusterRow struct {
	Name    string
	Health  string
	Version string
	CPU     string
	Memory  string
	Pods    string
	Labels  []string
	Sets    []string
	Tunnel  string
	// Acceptable: pending or denied, so accept applies.
	Acceptable bool
	// Deniable: accepted, so deny applies.
	Deniable bool
	// DenyInRow: deniable and not Available, so the fleet's row offers
	// Deny; a healthy cluster's Deny is on its own page only.
	DenyInRow bool
	Taints    []string
}

// fleetData is the fleet view's model.
type fleetData struct {
	Rows []clusterRow
	// Counts by health, over all clusters, and Total.
	Counts map[string]int
	Total  int
	// Shown is how many rows the filter kept.
	Shown    int
	Selector string
	Health   string
	Healths  []string
	// Error says what is wrong with the filter.
	Error   string
	Visible bool
}

func (s *server) fleet(r *http.Request) (*page, error) {
	d := &fleetData{Counts: map[string]int{}, Healths: healths, Selector: r.URL.Query().Get("label"), Health: r.URL.Query().Get("health")}
	sel := labels.Everything()
	if d.Selector != "" {
		var err error
		if sel, err = labels.Parse(d.Selector); err != nil {
			d.Error = fmt.Sprintf("label filter %q: %v (write it as kubectl does, e.g. env=prod,region!=eu)", d.Selector, err)
			sel = labels.Everything()
		}
	}
	list := &clusterv1.ManagedClusterList{}
	d.Visible = s.store.list(r.Context(), kindClusters, list)
	sets := s.clusterSets(r)
	for i := range list.Items {
		row := s.clusterRow(&list.Items[i], sets)
		d.Counts[row.Health]++
		d.Total++
		if !sel.Matches(labels.Set(list.Items[i].Labels)) || (d.Health != "" && d.Health != row.Health) {
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	slices.SortFunc(d.Rows, func(a, b clusterRow) int { return strings.Compare(a.Name, b.Name) })
	d.Shown = len(d.Rows)
	return &page{Title: "Fleet", Section: "fleet", Data: d}, nil
}

// setSelector is a cluster set and how it picks its members.
type setSelector struct {
	name string
	sel  labels.Selector
}

func (s *server) clusterSets(r *http.Request) []setSelector {
	list := &clusterv1beta2.ManagedClusterSetList{}
	s.store.list(r.Context(), kindClusterSets, list)
	var out []setSelector
	for i := range list.Items {
		sel, err := clusterset.Selector(&list.Items[i])
		if err != nil {
			continue
		}
		out = append(out, setSelector{list.Items[i].Name, sel})
	}
	// The cache lists in no stable order; a cluster's sets are read in order.
	slices.SortFunc(out, func(a, b setSelector) int { return strings.Compare(a.name, b.name) })
	return out
}

func (s *server) clusterRow(mc *clusterv1.ManagedCluster, sets []setSelector) clusterRow {
	row := clusterRow{
		Name:    mc.Name,
		Health:  health(mc),
		Version: mc.Status.Version.Kubernetes,
		CPU:     quantity(mc.Status.Capacity, "cpu"),
		Memory:  memory(mc.Status.Capacity),
		Pods:    quantity(mc.Status.Capacity, "pods"),
		Tunnel:  "—",
	}
	if row.Version == "" {
		row.Version = "—"
	}
	for _, k := range sortedKeys(mc.Labels) {
		row.Labels = append(row.Labels, k+"="+mc.Labels[k])
	}
	for _, set := range sets {
		if set.sel.Matches(labels.Set(mc.Labels)) {
			row.Sets = append(row.Sets, set.name)
		}
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, TunnelConnectedCondition); c != nil {
		row.Tunnel = map[string]string{"True": "Connected", "False": "Disconnected"}[string(c.Status)]
		if row.Tunnel == "" {
			row.Tunnel = "Unknown"
		}
	}
	for _, t := range mc.Spec.Taints {
		row.Taints = append(row.Taints, fmt.Sprintf("%s:%s", t.Key, t.Effect))
	}
	row.Acceptable = row.Health == healthPending || row.Health == healthDenied
	row.Deniable = mc.Spec.HubAcceptsClient
	row.DenyInRow = row.Deniable && row.Health != healthAvailable
	return row
}

// health is a cluster's state in one word.
func health(mc *clusterv1.ManagedCluster) string {
	if !mc.Spec.HubAcceptsClient {
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); c != nil && c.Status == "False" && c.Reason == "HubClusterAdminDenied" {
			return healthDenied
		}
		return healthPending
	}
	switch condition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
	case "True":
		return healthAvailable
	case "False":
		return healthUnavailable
	}
	return healthUnknown
}

func quantity(rl clusterv1.ResourceList, name clusterv1.ResourceName) string {
	q, ok := rl[name]
	if !ok {
		return "—"
	}
	return q.String()
}

// memory shows memory in GiB, the unit people read capacity in.
func memory(rl clusterv1.ResourceList) string {
	q, ok := rl["memory"]
	if !ok {
		return "—"
	}
	gib := float64(q.Value()) / float64(1<<30)
	if gib >= 10 {
		return fmt.Sprintf("%.0f GiB", gib)
	}
	return fmt.Sprintf("%.1f GiB", gib)
}
