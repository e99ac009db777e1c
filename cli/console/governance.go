package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// policyColumn is a root policy: a column of the matrix.
type policyColumn struct {
	Namespace, Name, Remediation, Compliant string
	// Switch is the remediation action to offer.
	Switch string
	// NonCompliant counts its NonCompliant clusters.
	NonCompliant int
}

// matrixRow is a cluster: a row of the matrix.
type matrixRow struct {
	Cluster string
	Cells   []string
}

// governanceData is the governance view's model.
type governanceData struct {
	Policies []policyColumn
	Rows     []matrixRow
	Visible  bool
	// Counts of cells by state.
	Counts map[string]int
	Chart  *chart
}

func (s *server) governance(r *http.Request) (*page, error) {
	ctx := r.Context()
	d := &governanceData{Counts: map[string]int{}}
	list := &policyv1.PolicyList{}
	d.Visible = s.store.list(ctx, kindPolicies, list)
	// cells[cluster][root] is the compliance of root on cluster.
	cells := map[string]map[string]string{}
	set := func(cluster, root, state string) {
		if cells[cluster] == nil {
			cells[cluster] = map[string]string{}
		}
		cells[cluster][root] = state
	}
	var replicated []*policyv1.Policy
	for i := range list.Items {
		p := &list.Items[i]
		if _, ok := p.Labels[policyv1.RootPolicyLabel]; ok {
			replicated = append(replicated, p)
			continue
		}
		col := policyColumn{Namespace: p.Namespace, Name: p.Name, Remediation: string(p.Spec.RemediationAction), Compliant: string(p.Status.ComplianceState), Switch: string(policyv1.Enforce)}
		if p.Spec.RemediationAction.IsEnforce() {
			col.Switch = string(policyv1.Inform)
		}
		if col.Remediation == "" {
			col.Remediation = "per template"
		}
		d.Policies = append(d.Policies, col)
		for _, st := range p.Status.Status {
			set(st.ClusterName, p.Namespace+"."+p.Name, string(st.ComplianceState))
		}
	}
	// The replicated policies are fresher than the root's roll-up.
	for _, p := range replicated {
		set(p.Namespace, p.Labels[policyv1.RootPolicyLabel], string(p.Status.ComplianceState))
	}
	slices.SortFunc(d.Policies, func(a, b policyColumn) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, c := range sortedKeys(cells) {
		row := matrixRow{Cluster: c}
		for i, p := range d.Policies {
			st, bound := cells[c][p.Namespace+"."+p.Name]
			if bound && st == "" {
				st = string(policyv1.Pending)
			}
			row.Cells = append(row.Cells, st)
			if st != "" {
				d.Counts[st]++
			}
			if st == string(policyv1.NonCompliant) {
				d.Policies[i].NonCompliant++
			}
		}
		d.Rows = append(d.Rows, row)
	}
	d.Chart = complianceChart(replicated, time.Now())
	return &page{Title: "Governance", Section: "governance", Data: d}, nil
}

// cellData is one cell: a policy on a cluster, template by template.
type cellData struct {
	Namespace, Name, Cluster string
	Compliant                string
	Templates                []policyv1.DetailsPerTemplate
	Found                    bool
}

func (s *server) cell(r *http.Request) (*page, error) {
	ns, name, cluster := r.PathValue("ns"), r.PathValue("name"), r.PathValue("cluster")
	d := &cellData{Namespace: ns, Name: name, Cluster: cluster}
	p := &policyv1.Policy{}
	if !s.store.visibleIn(kindPolicies, cluster) {
		return nil, fmt.Errorf("policy %s/%s on cluster %s: your hub RBAC does not let you see the policies in namespace %s", ns, name, cluster, cluster)
	}
	if err := s.store.cache.Get(r.Context(), client.ObjectKey{Namespace: cluster, Name: ns + "." + name}, p); err == nil {
		d.Found = true
		d.Compliant = string(p.Status.ComplianceState)
		d.Templates = p.Status.Details
	}
	return &page{Title: fmt.Sprintf("Policy %s/%s on %s", ns, name, cluster), Section: "governance", Data: d}, nil
}
