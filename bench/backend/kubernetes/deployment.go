// Package kubernetes is the kubernetes backend of the bench: it runs the
// servers the contenders' specs describe as pods of a Kubernetes cluster,
// one pod per server, in a namespace of the run's own, and reaches them
// at their pod addresses. The images are the containers backend's, made
// available to the nodes by the caller (Options.Publish: imported into
// the node's runtime, or pushed to a registry).
//
// Each server container runs the pod agent (package podagent) as its
// main process, copied in by an init container from the bench's own
// image. The bench starts the server through it once every replica of a
// spec has its pod address (a cluster learns its peers' addresses that
// way, without cluster DNS), and applies its faults through it by exec
// through the API: a kill, a graceful stop, a pause, a network cut and a
// restart in the same pod, which keeps the server's address.
package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes/podagent"
	"github.com/monolock/monolock-bench/bench/results"
)

// Labels on everything the backend creates.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "monolock-bench"
	labelRun       = "monolock-bench/run"
	labelServer    = "monolock-bench/server"
)

// Names of the pod's containers and volume.
const (
	serverContainer = "server"
	agentContainer  = "agent"
	agentVolume     = "agent"
)

// Timeouts: a pod's start (its images are on the node), a server's
// readiness after its start, the removal of the run's namespace.
const (
	podStartTimeout = 2 * time.Minute
	readyTimeout    = 2 * time.Minute
	closeTimeout    = 2 * time.Minute
	stopGrace       = 10 * time.Second
)

// agentPackage is the bench's own main package: its image carries the pod
// agent.
const agentPackage = "github.com/monolock/monolock-bench/cmd/monolock-bench"

// Options say which cluster and how images reach it.
type Options struct {
	// Kubeconfig is the kubeconfig file; "" reads $KUBECONFIG, then
	// ~/.kube/config.
	Kubeconfig string
	// Run names the run: the namespace is monolock-bench-<run>, lower
	// case, and every object carries it as the label monolock-bench/run.
	Run string
	// Publish makes an image of the Docker engine available to the
	// cluster's nodes and returns the reference pods use: the local
	// cluster imports it into its node's runtime. Required. The pods
	// never pull (imagePullPolicy Never).
	Publish func(ctx context.Context, ref string) (string, error)
	// BenchHost is the bench host's address as pods reach it, which the
	// bench can listen on (the local cluster: its pod network's gateway);
	// "" when pods cannot reach the bench.
	BenchHost string
	// Log receives progress; default slog.Default().
	Log *slog.Logger
}

// Deployment is one run's servers on a cluster. Its methods are safe for
// concurrent use.
type Deployment struct {
	c          *client
	kubeconfig string // as given; "" reads the usual places
	namespace  string
	run        string
	agentImage string // the bench's own image: the pod agent and the workers
	benchHost  string // Options.BenchHost
	log        *slog.Logger
	specs      []string // in start order, for Describe
	images     []results.Image
	mu         sync.Mutex
	servers    map[string][]bench.Server // of *server
	closeOnce  sync.Once
	closeErr   error
}

// Start creates the run's namespace, publishes the images and starts
// every spec's servers, each in a pod of its own. On error everything
// created is removed again.
func Start(ctx context.Context, specs []*bench.ServerSpec, o Options) (_ *Deployment, err error) {
	if o.Publish == nil {
		return nil, errors.New("kubernetes: Options.Publish is required")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	c, err := connect(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	d := &Deployment{c: c, kubeconfig: o.Kubeconfig, namespace: "monolock-bench-" + strings.ToLower(o.Run), run: o.Run, benchHost: o.BenchHost, log: o.Log, servers: map[string][]bench.Server{}}
	if err := d.createNamespace(ctx, o.Run); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	agentImage, err := d.publish(ctx, o, agentPackage, func(ctx context.Context) (engine.Image, error) {
		return engine.BuildGoImage(ctx, agentPackage, "monolock-bench")
	})
	if err != nil {
		return nil, err
	}
	d.agentImage = agentImage.cluster
	for _, spec := range specs {
		image, err := d.publish(ctx, o, spec.Name, func(ctx context.Context) (engine.Image, error) { return containers.Image(ctx, spec) })
		if err != nil {
			return nil, err
		}
		runtime, err := engine.InspectImage(ctx, image.local)
		if err != nil {
			return nil, err
		}
		srvs, err := d.startSpec(ctx, o, spec, image.cluster, agentImage.cluster, runtime)
		if err != nil {
			return nil, err
		}
		d.mu.Lock()
		d.servers[spec.Name] = srvs
		d.specs = append(d.specs, spec.Name)
		d.mu.Unlock()
	}
	return d, nil
}

// publishedImage is an image under its engine and its cluster reference.
type publishedImage struct{ local, cluster string }

func (d *Deployment) publish(ctx context.Context, o Options, role string, build func(context.Context) (engine.Image, error)) (publishedImage, error) {
	img, err := build(ctx)
	if err != nil {
		return publishedImage{}, err
	}
	ref, err := o.Publish(ctx, img.Ref)
	if err != nil {
		return publishedImage{}, fmt.Errorf("kubernetes: publish %s: %w", img.Ref, err)
	}
	d.images = append(d.images, results.Image{Role: role, Ref: ref, Source: img.Source})
	return publishedImage{local: img.Ref, cluster: ref}, nil
}

func (d *Deployment) createNamespace(ctx context.Context, run string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.namespace, Labels: map[string]string{labelManagedBy: managedBy, labelRun: run}}}
	if _, err := d.c.api.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kubernetes: create namespace %s: %w", d.namespace, err)
	}
	// A pod is refused until the namespace's service account exists,
	// which the controller manager creates within a second or so.
	return poll(ctx, 30*time.Second, func() (bool, error) {
		_, err := d.c.api.CoreV1().ServiceAccounts(d.namespace).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// startSpec creates the pods of spec's replicas, waits for their
// addresses, starts each server through its agent with its peers'
// addresses, and waits until every one serves.
func (d *Deployment) startSpec(ctx context.Context, o Options, spec *bench.ServerSpec, image, agentImage string, runtime engine.ImageRuntime) ([]bench.Server, error) {
	srvs := make([]*server, spec.Count())
	for i := range srvs {
		name := podName(spec.ServerName(i))
		pod := podSpec(name, spec, image, agentImage, o.Run)
		if _, err := d.c.api.CoreV1().Pods(d.namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("kubernetes: create pod %s: %w", name, err)
		}
		srvs[i] = &server{d: d, name: spec.ServerName(i), pod: name, spec: spec, user: runtime.User}
	}
	peers := make([]string, len(srvs))
	for i, s := range srvs {
		if err := s.waitRunning(ctx); err != nil {
			return nil, err
		}
		peers[i] = s.ip
	}
	// The replicas start concurrently: a cluster member is ready only
	// once a quorum runs.
	errs := make([]error, len(srvs))
	var wg sync.WaitGroup
	for i, s := range srvs {
		s.argv = serverArgv(spec, i, runtime, peers)
		wg.Go(func() { errs[i] = s.startAndWait(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]bench.Server, len(srvs))
	for i, s := range srvs {
		out[i] = s
	}
	return out, nil
}

// podName is a server's pod name: a DNS label.
func podName(server string) string {
	return strings.ToLower(strings.ReplaceAll(server, "_", "-"))
}

// podSpec is the pod named name of a server of spec: the agent copied in by an init
// container, then the server's image running the agent, as root with
// CAP_NET_ADMIN for the cut (the server itself runs as the image's user).
// The pods of one run prefer different nodes.
func podSpec(name string, spec *bench.ServerSpec, image, agentImage, run string) *corev1.Pod {
	labels := map[string]string{labelManagedBy: managedBy, labelRun: run, labelServer: name}
	root := int64(0)
	no := false
	grace := int64(stopGrace / time.Second)
	var ports []corev1.ContainerPort
	for _, p := range []int{spec.Port, spec.OpsPort, spec.PeerPort} {
		if p != 0 {
			ports = append(ports, corev1.ContainerPort{ContainerPort: int32(p)})
		}
	}
	mount := []corev1.VolumeMount{{Name: agentVolume, MountPath: podagent.Dir}}
	var sysctls []corev1.Sysctl
	for k, v := range spec.Sysctls {
		sysctls = append(sysctls, corev1.Sysctl{Name: k, Value: v})
	}
	slices.SortFunc(sysctls, func(a, b corev1.Sysctl) int { return strings.Compare(a.Name, b.Name) })
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext:               &corev1.PodSecurityContext{Sysctls: sysctls},
			Affinity:                      spreadOver(map[string]string{labelRun: run}),
			InitContainers: []corev1.Container{{
				Name: agentContainer, Image: agentImage, ImagePullPolicy: corev1.PullNever,
				Command:      []string{"/monolock-bench", "pod-agent", "install", podagent.Dir},
				VolumeMounts: mount,
			}},
			Containers: []corev1.Container{{
				Name: serverContainer, Image: image, ImagePullPolicy: corev1.PullNever,
				Command:      []string{podagent.Binary, "pod-agent", "serve", podagent.Socket},
				Ports:        ports,
				VolumeMounts: mount,
				SecurityContext: &corev1.SecurityContext{
					RunAsUser: &root, RunAsGroup: &root,
					Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}},
				},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
			}},
			Volumes: []corev1.Volume{{Name: agentVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

// spreadOver asks the scheduler to put the pods matching labels on
// different nodes where it can.
func spreadOver(labels map[string]string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
				TopologyKey:   "kubernetes.io/hostname",
			},
		}},
	}}
}

// serverArgv is the command line of replica i, as the containers backend
// gives it: listening on every interface at the spec's ports, its peers at
// their pod addresses; an image's entrypoint first.
func serverArgv(spec *bench.ServerSpec, i int, runtime engine.ImageRuntime, peers []string) []string {
	return append(slices.Clone(runtime.Entrypoint), spec.ImageCommand(i, peers)...)
}

// Servers implements bench.Deployment.
func (d *Deployment) Servers(spec string) []bench.Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.servers[spec])
}

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "kubernetes"
	d.mu.Lock()
	defer d.mu.Unlock()
	nodes := map[string]bool{}
	for _, spec := range d.specs {
		for _, s := range d.servers[spec] {
			srv := s.(*server)
			env.Servers = append(env.Servers, results.Server{Role: s.Name(), Address: s.Addr()})
			nodes[srv.node] = true
		}
	}
	env.NetworkPath = fmt.Sprintf("pod addresses on the cluster's network (API server %s, namespace %s, servers on %d node(s): %s); faults by exec through the API into each server's pod agent; the handover holder runs in a client pod of its own, whose crash, freeze and host loss go through the API the same way",
		d.c.host, d.namespace, len(nodes), strings.Join(slices.Sorted(maps.Keys(nodes)), ", "))
	env.Images = append(env.Images, d.images...)
}

// Close deletes the run's namespace and everything in it, with its own
// timeout so that it also works after Ctrl-C, and waits until it is gone.
// Safe to call twice.
func (d *Deployment) Close() error {
	d.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		now := int64(0)
		pods := d.c.api.CoreV1().Pods(d.namespace)
		if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &now}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			d.closeErr = fmt.Errorf("kubernetes: delete pods of %s: %w", d.namespace, err)
		}
		if err := d.c.api.CoreV1().Namespaces().Delete(ctx, d.namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			d.closeErr = errors.Join(d.closeErr, fmt.Errorf("kubernetes: delete namespace %s: %w", d.namespace, err))
			return
		}
		err := poll(ctx, closeTimeout, func() (bool, error) {
			_, err := d.c.api.CoreV1().Namespaces().Get(ctx, d.namespace, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			d.closeErr = errors.Join(d.closeErr, fmt.Errorf("kubernetes: namespace %s not gone: %w", d.namespace, err))
		}
	})
	return d.closeErr
}

// poll calls done every 100 ms until it says true or fails, or limit
// passes.
func poll(ctx context.Context, limit time.Duration, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		ok, err := done()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
