package devcluster

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// NodeLabel marks the simulated nodes of a dev cluster.
const NodeLabel = "flotilla.io/dev-node"

// nodeName is the name of the i-th node (from 1) of cluster name.
func nodeName(name string, i int) string {
	return name + "-node-" + strconv.Itoa(i)
}

// desiredNodes are the simulated nodes the options ask for: the same
// capacity on each, the region on all, the zones in turn.
func desiredNodes(o Options) []*corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              o.NodeCPU,
		corev1.ResourceMemory:           o.NodeMemory,
		corev1.ResourcePods:             *resource.NewQuantity(int64(o.NodePods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	nodes := make([]*corev1.Node, 0, o.Nodes)
	for i := 1; i <= o.Nodes; i++ {
		name := nodeName(o.Name, i)
		l := map[string]string{
			NodeLabel:                "true",
			corev1.LabelHostname:     name,
			corev1.LabelOSStable:     "linux",
			corev1.LabelArchStable:   "amd64",
			corev1.LabelInstanceType: fmt.Sprintf("dev-%sx%s", o.NodeCPU.String(), o.NodeMemory.String()),
		}
		if o.Region != "" {
			l[corev1.LabelTopologyRegion] = o.Region
		}
		if len(o.Zones) > 0 {
			l[corev1.LabelTopologyZone] = o.Zones[(i-1)%len(o.Zones)]
		}
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      l,
				Annotations: map[string]string{kwokAnnotation: "fake"},
			},
			Status: corev1.NodeStatus{
				Capacity:    capacity.DeepCopy(),
				Allocatable: capacity.DeepCopy(),
			},
		})
	}
	return nodes
}

// ensureNodes makes the cluster's simulated nodes what the options ask
// for: it creates the missing ones, updates the labels and capacity of the
// others (a restart may change them) and deletes those no longer wanted.
func ensureNodes(ctx context.Context, client kubernetes.Interface, o Options) error {
	want := desiredNodes(o)
	existing, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labels.Set{NodeLabel: "true"}.String()})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	have := map[string]*corev1.Node{}
	for i := range existing.Items {
		have[existing.Items[i].Name] = &existing.Items[i]
	}
	for _, n := range want {
		old, ok := have[n.Name]
		delete(have, n.Name)
		if !ok {
			if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create node %s: %w", n.Name, err)
			}
			continue
		}
		if err := updateNode(ctx, client, old, n); err != nil {
			return err
		}
	}
	for name := range have {
		if err := client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", name, err)
		}
	}
	return nil
}

// updateNode gives an existing node the wanted labels and capacity.
func updateNode(ctx context.Context, client kubernetes.Interface, old, want *corev1.Node) error {
	n := old.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for _, k := range []string{corev1.LabelTopologyRegion, corev1.LabelTopologyZone} {
		delete(n.Labels, k)
	}
	for k, v := range want.Labels {
		n.Labels[k] = v
	}
	if !labels.Equals(n.Labels, old.Labels) {
		var err error
		if n, err = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update node %s: %w", n.Name, err)
		}
	}
	if equalResources(n.Status.Capacity, want.Status.Capacity) && equalResources(n.Status.Allocatable, want.Status.Allocatable) {
		return nil
	}
	n.Status.Capacity, n.Status.Allocatable = want.Status.Capacity, want.Status.Allocatable
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update the capacity of node %s: %w", n.Name, err)
	}
	return nil
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if other, ok := b[k]; !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// nodesReady reports whether every wanted node is Ready and schedulable
// (without the not-ready taint that nodes get when created), and names the
// first that is not.
func nodesReady(ctx context.Context, client kubernetes.Interface, o Options) (bool, string, error) {
	for _, want := range desiredNodes(o) {
		n, err := client.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return false, want.Name, err
		}
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		for _, t := range n.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady {
				ready = false
			}
		}
		if !ready {
			return false, want.Name, nil
		}
	}
	return true, "", nil
}
