package hub

import (
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/flotilla/hub/clusterset"
	"github.com/flotilla-io/flotilla/hub/placement"
	"github.com/flotilla-io/flotilla/hub/policy"
	"github.com/flotilla-io/flotilla/hub/registration"
	"github.com/flotilla-io/flotilla/hub/workreplicaset"
)

// setupControllers adds every hub controller to the manager. Each
// capability (registration, work, placement, policy) adds its own.
func setupControllers(mgr manager.Manager) error {
	for _, setup := range []func(manager.Manager) error{
		registration.Setup,
		clusterset.Setup, placement.Setup, policy.Setup, workreplicaset.Setup,
	} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
