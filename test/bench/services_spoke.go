package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/flotilla-io/flotilla/internal/mcs"
	"github.com/flotilla-io/flotilla/test/framework"
)

// benchSliceManager is the endpointslice.kubernetes.io/managed-by of the
// EndpointSlices the benchmark writes for the Services it exports from a
// real spoke: Services without a selector, whose endpoints the built-in
// controller leaves to whoever writes them.
const benchSliceManager = "bench.flotilla.io"

// realSpoke is a real managed cluster of the services benchmark: a
// flotilla-dev-cluster process (API server, the EndpointSlice controller
// among the kube controllers, kwok nodes) whose agent runs the real
// services code, and the benchmark's watch of the EndpointSlices that
// agent writes for the imports.
type realSpoke struct {
	name       string
	proc       *framework.Process
	kubeconfig string
	cfg        *rest.Config
	c          client.Client
	kube       kubernetes.Interface
	// slices holds the imported EndpointSlices (managed-by mcs.ManagedBy).
	slices toolscache.Store
	// mu guards own, the EndpointSlices the benchmark wrote, by service.
	mu  sync.Mutex
	own map[int]*discoveryv1.EndpointSlice
}

// spokeScheme has the kinds the benchmark writes into a real spoke.
func spokeScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.AddToScheme(s))
	return s
}

// startRealSpoke starts a dev cluster for cluster name.
func startRealSpoke(ctx context.Context, e *env, name string) (*realSpoke, error) {
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.workDir, "services-"+name)
	proc, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-dev-cluster"),
		"--name", name, "--data-dir", dir, "--secure-port", fmt.Sprint(port), "--nodes", "1")
	if err != nil {
		return nil, err
	}
	s := &realSpoke{name: name, proc: proc, kubeconfig: filepath.Join(dir, "admin.kubeconfig"), own: map[int]*discoveryv1.EndpointSlice{}}
	if err := proc.WaitForOutput("flotilla-dev-cluster is ready at", 2*time.Minute); err != nil {
		proc.Stop(time.Minute)
		return nil, fmt.Errorf("start the dev cluster of %s: %w\n%s", name, err, proc.Tail(20))
	}
	if s.cfg, err = clientcmd.BuildConfigFromFlags("", s.kubeconfig); err != nil {
		proc.Stop(time.Minute)
		return nil, err
	}
	s.cfg.QPS, s.cfg.Burst = 200, 400
	if s.c, err = client.New(s.cfg, client.Options{Scheme: spokeScheme()}); err == nil {
		s.kube, err = kubernetes.NewForConfig(s.cfg)
	}
	if err != nil {
		proc.Stop(time.Minute)
		return nil, err
	}
	return s, nil
}

func (s *realSpoke) stop() { s.proc.Stop(time.Minute) }

// watchImports starts the benchmark's watch of the EndpointSlices the
// agent writes into namespace ns for imports; each that holds the probe's
// address from its origin marks the spoke as having seen it.
func (s *realSpoke) watchImports(ctx context.Context, ns string, board *probeBoard) error {
	f := informers.NewSharedInformerFactoryWithOptions(s.kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = discoveryv1.LabelManagedBy + "=" + mcs.ManagedBy
		}))
	inf := f.Discovery().V1().EndpointSlices().Informer()
	on := func(obj any) {
		now := time.Now()
		es, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok {
			return
		}
		p := board.current(mcs.ObjectName(es.Namespace, es.Labels[mcsv1beta1.LabelServiceName]))
		if p == nil || es.Labels[mcsv1beta1.LabelSourceCluster] != p.origin {
			return
		}
		for _, e := range es.Endpoints {
			if slices.Contains(e.Addresses, p.addr) {
				board.seen(p, s.name, now)
				return
			}
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: on, UpdateFunc: func(_, o any) { on(o) },
	}); err != nil {
		return err
	}
	s.slices = inf.GetStore()
	f.Start(ctx.Done())
	for _, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("spoke %s: the watch of its imported EndpointSlices did not sync", s.name)
		}
	}
	return nil
}

// importsComplete counts the services of which the spoke holds, from
// every exporter, an EndpointSlice of all its endpoints.
func (s *realSpoke) importsComplete(l *servicesLayout) int {
	have := map[string]int{}
	for _, o := range s.slices.List() {
		es := o.(*discoveryv1.EndpointSlice)
		have[es.Labels[mcsv1beta1.LabelServiceName]+"/"+es.Labels[mcsv1beta1.LabelSourceCluster]] += len(es.Endpoints)
	}
	n := 0
	for j := range l.services {
		all := true
		for _, c := range l.exportersOf(j) {
			if have[l.name(j)+"/"+l.clusters[c]] != l.endpoints {
				all = false
				break
			}
		}
		if all {
			n++
		}
	}
	return n
}

// waitServiceExports waits until the spoke serves ServiceExports: its
// agent installs the MCS CRDs where they are missing.
func (s *realSpoke) waitServiceExports(ctx context.Context, timeout time.Duration) error {
	err := waitUntil(ctx, timeout, func() (bool, string) {
		err := s.c.List(ctx, &mcsv1beta1.ServiceExportList{}, client.Limit(1))
		return err == nil, fmt.Sprint(err)
	})
	if err != nil {
		return fmt.Errorf("spoke %s serves no ServiceExports (the agent installs the MCS CRDs): %w", s.name, err)
	}
	return nil
}

// export creates, for every service cluster c exports, the namespace, a
// ClusterIP Service without selector, its EndpointSlice and a
// ServiceExport.
func (s *realSpoke) export(ctx context.Context, l *servicesLayout, c int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.namespace}}
	if err := s.c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("spoke %s: create namespace %s: %w", s.name, l.namespace, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, j := range l.exportsOf(c) {
		g.Go(func() error {
			name := l.name(j)
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.namespace},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{
					{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}
			es := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Name: name + "-bench", Namespace: l.namespace, Labels: map[string]string{
					discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: benchSliceManager}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints:   l.endpointList(c, j, ""),
				Ports:       endpointPorts(),
			}
			se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.namespace}}
			for _, o := range []client.Object{svc, es, se} {
				if err := s.c.Create(gctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("spoke %s: create %T %s/%s: %w", s.name, o, l.namespace, name, err)
				}
			}
			s.mu.Lock()
			s.own[j] = es
			s.mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// change gives the first endpoint of the spoke's EndpointSlice of service
// j address addr: one update, as the EndpointSlice controller writes a
// changed endpoint.
func (s *realSpoke) change(ctx context.Context, l *servicesLayout, c, j int, addr string) error {
	s.mu.Lock()
	es := s.own[j].DeepCopy()
	s.mu.Unlock()
	es.Endpoints = l.endpointList(c, j, addr)
	if err := s.c.Update(ctx, es); err != nil {
		return fmt.Errorf("spoke %s: update EndpointSlice %s/%s: %w", s.name, es.Namespace, es.Name, err)
	}
	s.mu.Lock()
	s.own[j] = es
	s.mu.Unlock()
	return nil
}
