package work

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// Simulator computes the status this agent reports for a ManifestWork
// whose every manifest it applied, and found available, on a managed
// cluster that held nothing else — without a managed cluster. It is for
// simulators that stand in for many agents (test/bench's hollow agents),
// so that what they write to the hub has the shape this package writes:
// the same conditions, reasons, messages, ordinals and feedback. Safe for
// concurrent use.
type Simulator struct {
	r *reconciler
}

// NewSimulator returns a Simulator that resolves the manifests' kinds
// with mapper (only its RESTMapping is used).
func NewSimulator(mapper meta.RESTMapper) *Simulator {
	a := &Agent{cfg: Config{ResyncInterval: DefaultResyncInterval}, spoke: &spokeClients{mapper: mapper}, cel: newCELCache()}
	return &Simulator{r: &reconciler{Agent: a}}
}

// SetStatus sets work's status as a pass of the agent at now would: each
// manifest as it would be once applied (or read, for ReadOnly), the live
// object being the manifest itself, and the work's conditions rolled up,
// their transition times kept from the status work holds.
func (sim *Simulator) SetStatus(work *workv1.ManifestWork, now time.Time) {
	s := &scope{work: work, state: &workState{manifests: map[objectKey]*manifestState{}}, now: now}
	for i, m := range work.Spec.Workload.Manifests {
		p := sim.r.planManifest(i, m, work.Spec.ManifestConfigs)
		if p.invalid == nil {
			p.result.live = p.desired
			p.result.owned = p.strategy != workv1.UpdateStrategyTypeReadOnly
		}
		s.manifests = append(s.manifests, p)
	}
	// report returns no error of its own.
	_ = sim.r.report(context.Background(), s)
}
