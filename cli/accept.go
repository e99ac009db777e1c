package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// pollInterval is how often waiting commands look again.
const pollInterval = time.Second

// defaultWaitTimeout bounds --wait.
const defaultWaitTimeout = 5 * time.Minute

type acceptOptions struct {
	*globalOptions
	clusters  []string
	wait      bool
	timeout   time.Duration
	skipCheck bool
}

func newAcceptCommand(g *globalOptions) *cobra.Command {
	o := &acceptOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "accept --clusters NAME[,NAME...]",
		Short: "Accept clusters that asked to join: approve their CSRs and set hubAcceptsClient",
		Long: `Accept managed clusters whose agents asked to join the hub.

For each cluster it approves the pending certificate signing requests
labelled open-cluster-management.io/cluster-name=<cluster>, and sets
spec.hubAcceptsClient on its ManagedCluster. The hub then creates the
cluster's namespace and RBAC, and signs the approved CSRs; the agent stores
its new credentials and the cluster joins.

A CSR is approved only if a join identity requested it (a bootstrap token
in group system:bootstrappers:managedcluster, or OCM's cluster-bootstrap
service account), and it asks for exactly an agent's client certificate for
that cluster: signer kubernetes.io/kube-apiserver-client, subject
CN=system:open-cluster-management:<cluster>:<agent-id> with
O=system:open-cluster-management:<cluster> (and, optionally,
system:open-cluster-management:managed-clusters). Any other pending CSR for
the cluster is refused: the command then approves and accepts nothing for
that cluster, and fails, naming the CSR and what is wrong with it.
--skip-approve-check approves whatever is pending for the cluster: use it
only for CSRs you have inspected.

Without --wait the cluster must already have asked (run join first). With
--wait, accept waits until the ManagedCluster and a CSR exist, accepts, and
then waits until the hub has accepted the cluster and its agent has joined.`,
		Example: `  # Accept one cluster.
  flotilla accept --clusters cluster1

  # Accept two, waiting up to 10 minutes for them to ask and to join.
  flotilla accept --clusters cluster1,cluster2 --wait --timeout 10m

  # Approve a CSR that the checks refused, after inspecting it.
  kubectl get csr -l open-cluster-management.io/cluster-name=cluster1 -o yaml
  flotilla accept --clusters cluster1 --skip-approve-check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.clusters = cleanClusterList(o.clusters)
			if err := validateClusterList(o.clusters); err != nil {
				return err
			}
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.clusters, "clusters", nil, "names of the clusters to accept, comma separated")
	f.BoolVar(&o.wait, "wait", false, "wait until each cluster has asked to join, then until it has joined")
	f.DurationVar(&o.timeout, "timeout", defaultWaitTimeout, "how long --wait waits in all")
	f.BoolVar(&o.skipCheck, "skip-approve-check", false, "approve every pending CSR of the clusters, even those that fail the checks")
	_ = cmd.RegisterFlagCompletionFunc("clusters", completeClusterNames(g))
	return cmd
}

// cleanClusterList trims and de-duplicates --clusters, keeping the order.
func cleanClusterList(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// validateClusterList checks --clusters before anything is sent anywhere.
func validateClusterList(names []string) error {
	if len(names) == 0 {
		return errors.New("--clusters is required: name the clusters, e.g. --clusters cluster1,cluster2")
	}
	for _, n := range names {
		if err := validateClusterName(n); err != nil {
			return fmt.Errorf("--clusters: %w", err)
		}
	}
	return nil
}

// validateClusterName requires a DNS-1123 label, as namespaces are: each
// cluster gets a hub namespace of its own name.
func validateClusterName(name string) error {
	if name == "" {
		return errors.New("the cluster name is empty")
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid cluster name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

func (o *acceptOptions) run(ctx context.Context) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	if o.wait {
		// Clusters are waited for side by side: accepting a fleet must not
		// take the sum of every agent's join time.
		deadline := time.Now().Add(o.timeout)
		out := &lockedWriter{w: o.streams.ErrOut}
		errs := make([]error, len(o.clusters))
		sem := make(chan struct{}, acceptParallelism)
		var wg sync.WaitGroup
		for i, name := range o.clusters {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				errs[i] = o.acceptAndWait(ctx, c, name, deadline, out)
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	var errs []error
	for _, name := range o.clusters {
		pass, err := o.acceptOnce(ctx, c, name)
		if err == nil {
			err = pass.verdict()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// acceptPass is what one pass over a cluster found and did.
type acceptPass struct {
	name    string
	cluster *clusterv1.ManagedCluster // nil while it does not exist
	csrs    int                       // CSRs labelled for the cluster, in any state
	// approved counts the CSRs approved in this pass.
	approved int
	refused  []string
	// skipCheck records whether --skip-approve-check was given, for messages.
	skipCheck bool
}

// acceptOnce approves the cluster's acceptable pending CSRs and sets
// hubAcceptsClient if the ManagedCluster exists.
func (o *acceptOptions) acceptOnce(ctx context.Context, c *clients, name string) (acceptPass, error) {
	pass := acceptPass{name: name, skipCheck: o.skipCheck}
	csrs, err := c.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{clusterv1.ClusterNameLabel: name}.String(),
	})
	if err != nil {
		return pass, explain(err, c.where, "list the CSRs of cluster "+name)
	}
	pass.csrs = len(csrs.Items)
	var approvable []*certificatesv1.CertificateSigningRequest
	for i := range csrs.Items {
		csr := &csrs.Items[i]
		if csrState(csr) != "pending" {
			continue
		}
		if !o.skipCheck {
			if err := checkCSR(csr, name); err != nil {
				pass.refused = append(pass.refused, fmt.Sprintf("CSR %s: %v", csr.Name, err))
				continue
			}
		}
		approvable = append(approvable, csr)
	}
	// A suspicious CSR for the cluster stops everything for it, until an
	// administrator has looked.
	if len(pass.refused) > 0 {
		return pass, nil
	}
	for _, csr := range approvable {
		if err := approveCSR(ctx, c, csr); err != nil {
			return pass, err
		}
		pass.approved++
		o.notef("Hub: approved CSR %s of cluster %s (requested by %s)", csr.Name, name, csr.Spec.Username)
	}

	mc := &clusterv1.ManagedCluster{}
	if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return pass, nil
		}
		return pass, explainClusterAPI(err, c, "get ManagedCluster "+name)
	}
	pass.cluster = mc
	if !mc.Spec.HubAcceptsClient {
		if err := setHubAcceptsClient(ctx, c, mc, true); err != nil {
			return pass, err
		}
		o.notef("Hub: set hubAcceptsClient on ManagedCluster %s", name)
	}
	return pass, nil
}

func approveCSR(ctx context.Context, c *clients, csr *certificatesv1.CertificateSigningRequest) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:           certificatesv1.CertificateApproved,
		Status:         corev1.ConditionTrue,
		Reason:         "FlotillaAccept",
		Message:        "Approved by flotilla accept.",
		LastUpdateTime: metav1.Now(),
	})
	_, err := c.kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	return explain(err, c.where, "approve CSR "+csr.Name)
}

func setHubAcceptsClient(ctx context.Context, c *clients, mc *clusterv1.ManagedCluster, accept bool) error {
	orig := mc.DeepCopy()
	mc.Spec.HubAcceptsClient = accept
	if err := c.ctrl.Patch(ctx, mc, client.MergeFrom(orig)); err != nil {
		return explain(err, c.where, fmt.Sprintf("set spec.hubAcceptsClient=%t on ManagedCluster %s", accept, mc.Name))
	}
	return nil
}

// refusals is the error for refused CSRs, nil when there are none.
func (p acceptPass) refusals() error {
	if len(p.refused) == 0 {
		return nil
	}
	return fmt.Errorf("refused to approve %d CSR(s) of cluster %s, so nothing was approved or accepted for it:\n  %s\nIf you trust them after inspecting them (kubectl get csr NAME -o yaml), approve them with --skip-approve-check; otherwise delete them (kubectl delete csr NAME)",
		len(p.refused), p.name, strings.Join(p.refused, "\n  "))
}

// verdict is the result of accept without --wait.
func (p acceptPass) verdict() error {
	if err := p.refusals(); err != nil {
		return err
	}
	if p.cluster == nil {
		return fmt.Errorf("ManagedCluster %s does not exist on the hub: the cluster has not asked to join yet\nRun `flotilla join ... --cluster-name %s` on it first, or accept with --wait to wait for it", p.name, p.name)
	}
	if p.approved == 0 && p.csrs == 0 && !meta.IsStatusConditionTrue(p.cluster.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
		return fmt.Errorf("cluster %s has no CSR to approve: its agent has not asked for credentials yet\nCheck that the agent runs on the cluster, or accept with --wait to wait for it", p.name)
	}
	return nil
}

// missing lists what cluster still lacks to be joined, first things first.
func (p acceptPass) missing() []string {
	var m []string
	if p.cluster == nil {
		m = append(m, fmt.Sprintf("ManagedCluster %s does not exist yet (has `flotilla join` run on the cluster?)", p.name))
	}
	if p.csrs == 0 {
		m = append(m, "its agent has not created a CSR yet")
	}
	if len(m) > 0 {
		return m
	}
	conds := p.cluster.Status.Conditions
	if !meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionHubAccepted) {
		m = append(m, "the hub has not set HubAcceptedManagedCluster=True yet (do the hub controllers run?)")
	}
	if !meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionJoined) {
		m = append(m, "its agent has not joined yet (ManagedClusterJoined is not True: see the agent's logs on the cluster)")
	}
	return m
}

// acceptAndWait accepts name as soon as it has asked, and waits until it joined.
func (o *acceptOptions) acceptAndWait(ctx context.Context, c *clients, name string, deadline time.Time, out io.Writer) error {
	prog := newProgress(out)
	last := acceptPass{name: name}
	err := pollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		pass, err := o.acceptOnce(ctx, c, name)
		if err != nil {
			return false, err
		}
		if err := pass.refusals(); err != nil {
			return false, err
		}
		last = pass
		missing := pass.missing()
		if len(missing) == 0 {
			prog.report("Cluster %s is accepted and joined.", name)
			return true, nil
		}
		prog.report("Waiting for cluster %s: %s", name, missing[0])
		return false, nil
	})
	if errors.Is(err, errTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for cluster %s: %s", o.timeout, name, strings.Join(last.missing(), "; "))
	}
	return err
}

// acceptParallelism bounds how many clusters accept --wait polls at once.
const acceptParallelism = 32

// lockedWriter serialises the progress lines of concurrent waits.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newDenyCommand(g *globalOptions) *cobra.Command {
	var clusters []string
	cmd := &cobra.Command{
		Use:   "deny --clusters NAME[,NAME...]",
		Short: "Stop accepting clusters: clear spec.hubAcceptsClient",
		Long: `Stop accepting managed clusters: set spec.hubAcceptsClient to false on their
ManagedClusters. The hub removes the clusters' RBAC, so their agents can no
longer read their work or report status; the ManagedClusters and their
namespaces stay, and "flotilla accept" takes them back.`,
		Example: `  flotilla deny --clusters cluster1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			clusters = cleanClusterList(clusters)
			if err := validateClusterList(clusters); err != nil {
				return err
			}
			c, err := g.clientsFor(hubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, name := range clusters {
				mc := &clusterv1.ManagedCluster{}
				if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
					if apierrors.IsNotFound(err) {
						return fmt.Errorf("ManagedCluster %s not found on %s (see `flotilla get clusters`)", name, c.where)
					}
					return explainClusterAPI(err, c, "get ManagedCluster "+name)
				}
				if !mc.Spec.HubAcceptsClient {
					g.notef("Hub: ManagedCluster %s was not accepted; nothing to do", name)
					continue
				}
				if err := setHubAcceptsClient(ctx, c, mc, false); err != nil {
					return err
				}
				g.notef("Hub: cleared hubAcceptsClient on ManagedCluster %s", name)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "names of the clusters to deny, comma separated")
	_ = cmd.RegisterFlagCompletionFunc("clusters", completeClusterNames(g))
	return cmd
}
