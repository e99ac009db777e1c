package hub

import (
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/flotilla/hub/addon"
	addonregistration "github.com/flotilla-io/flotilla/hub/addon/registration"
	addontemplate "github.com/flotilla-io/flotilla/hub/addon/template"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/hub/clustermanager"
	"github.com/flotilla-io/flotilla/hub/clusterset"
	"github.com/flotilla-io/flotilla/hub/inventory"
	"github.com/flotilla-io/flotilla/hub/placement"
	"github.com/flotilla-io/flotilla/hub/policy"
	"github.com/flotilla-io/flotilla/hub/registration"
	"github.com/flotilla-io/flotilla/hub/services"
	"github.com/flotilla-io/flotilla/hub/workreplicaset"
	"github.com/flotilla-io/flotilla/internal/version"
)

// setupControllers adds every hub controller to the manager. Each
// capability (registration, work, placement, policy) adds its own.
func setupControllers(mgr manager.Manager, opts Options) error {
	for _, setup := range []func(manager.Manager) error{
		registration.Setup,
		clusterset.Setup, placement.Setup, policy.Setup, workreplicaset.Setup,
		inventory.Setup,
		services.Setup,
		addon.Setup,
		addonregistration.Setup,
		addontemplate.Setup,
		func(mgr manager.Manager) error {
			return clustermanager.Setup(mgr, clustermanager.Options{
				Version: version.Version, Namespace: Namespace, Holder: opts.LeaderIdentity, WorkWebhook: opts.Webhook.enabled(),
			})
		},
		func(mgr manager.Manager) error { return bootstraptoken.Setup(mgr, opts.bootstrapTokens()) },
	} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
