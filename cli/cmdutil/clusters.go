package cmdutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// PollInterval is how often waiting commands look again.
const PollInterval = time.Second

// DefaultWaitTimeout bounds --wait.
const DefaultWaitTimeout = 5 * time.Minute

// CleanClusterList trims and de-duplicates --clusters, keeping the order.
func CleanClusterList(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ValidateClusterList checks --clusters before anything is sent anywhere.
func ValidateClusterList(names []string) error {
	if len(names) == 0 {
		return errors.New("--clusters is required: name the clusters, e.g. --clusters cluster1,cluster2")
	}
	for _, n := range names {
		if err := ValidateClusterName(n); err != nil {
			return fmt.Errorf("--clusters: %w", err)
		}
	}
	return nil
}

// ValidateClusterName requires a DNS-1123 label, as namespaces are: each
// cluster gets a hub namespace of its own name.
func ValidateClusterName(name string) error {
	if name == "" {
		return errors.New("the cluster name is empty")
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid cluster name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// ExplainClusterAPI is explain, with a hint for an API server that is not a hub.
func ExplainClusterAPI(err error, c *Clients, what string) error {
	if meta.IsNoMatchError(err) {
		return &notHubError{where: c.Where, err: err}
	}
	return Explain(err, c.Where, what)
}

// notHubError is an API server that does not serve ManagedClusters. It
// keeps the error it was told by, so that a --wait can tell a hub that is
// starting again from a server that is no hub.
type notHubError struct {
	where string
	err   error
}

func (e *notHubError) Error() string {
	return fmt.Sprintf("%s does not serve ManagedClusters, so it is not a Flotilla hub: point --kubeconfig at the hub", e.where)
}

func (e *notHubError) Unwrap() error { return e.err }

// BoolColumn shows a boolean as a condition status does: True or False.
func BoolColumn(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// ConditionColumn shows a condition's status; Unknown until it is reported.
func ConditionColumn(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

// AgeColumn shows how long ago created was, as kubectl does.
func AgeColumn(created metav1.Time, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created.Time))
}

// QuantityColumn shows one resource of a list; <none> when it is missing.
func QuantityColumn(l clusterv1.ResourceList, name clusterv1.ResourceName) string {
	if q, ok := l[name]; ok {
		return q.String()
	}
	return "<none>"
}

// LabelsColumn shows labels as sorted key=value pairs; <none> when there are none.
func LabelsColumn(labels map[string]string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// URLColumn shows the first client config's URL; <none> when there is none.
func URLColumn(cfgs []clusterv1.ClientConfig) string {
	if len(cfgs) == 0 {
		return "<none>"
	}
	return cfgs[0].URL
}

// OrNone is s, or <none> when s is empty.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// OrDash is s, or - when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Plural says "1 manifest", "2 manifests".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
