package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/record"

	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// addGangFlags adds the gang output's flags.
func addGangFlags(fl *pflag.FlagSet, f *controllerFlags) {
	targets := make([]string, 0, 4)
	for _, t := range podgroups.Targets() {
		targets = append(targets, string(t))
	}
	fl.StringVar(&f.gangOutput, "gang-output", "", "keep the `TARGET` scheduler's gang objects in step with every workload a Karta describes: "+strings.Join(targets, ", "))
	fl.StringSliceVar(&f.gangSkip, "gang-output-skip", nil, "the workload `KINDS` (Kind.group, comma-separated) left to their own operator (default: the target's list, see docs/controller.md; empty: none)")
	fl.StringVar(&f.gangSelector, "gang-output-selector", "", "only the workloads whose labels match this `SELECTOR`; the others, and their pods, are left alone")
	fl.StringVar(&f.gangQueue, "gang-output-queue", "", "the `QUEUE` of KAI's and Volcano's PodGroups (default: the one the workload names)")
	fl.BoolVar(&f.gangCPG, "gang-output-composite-pod-group", false, "for workload-api: write a group with subgroups as CompositePodGroups (scheduling.k8s.io/v1alpha3, the alpha CompositePodGroup feature gate) with a PodGroup per leaf subgroup; the cluster must serve them")
	fl.BoolVar(&f.gangVolcanoPolicy, "gang-output-volcano-subgroup-policy", false, "for volcano: write a subgroup whose children are leaves of one size as a subGroupPolicy (Volcano v1.14.1 or later), the pod webhook labelling its leaves' pods for it")
	fl.BoolVar(&f.podWebhook, "pod-webhook", false, "also serve the pod admission webhook that links each new pod to its group, at "+gangoutput.WebhookPath+" on --serve's port")
}

// checkGang rejects gang output flags that cannot work (exit 2).
func (f *controllerFlags) checkGang() error {
	if f.gangOutput == "" {
		for _, name := range []string{"gang-output-skip", "gang-output-selector", "gang-output-queue", "gang-output-composite-pod-group", "gang-output-volcano-subgroup-policy"} {
			if f.changed(name) {
				return usageError("--%s is for --gang-output", name)
			}
		}
		if f.podWebhook {
			return usageError("--pod-webhook needs --gang-output: it links pods to the target's groups")
		}
		return nil
	}
	if _, err := podgroups.ParseTarget(f.gangOutput); err != nil {
		return usageError("--gang-output: %v", err)
	}
	if _, err := gangoutput.ParseKinds(f.gangSkip); err != nil {
		return usageError("--gang-output-skip: %v", err)
	}
	if _, err := labels.Parse(f.gangSelector); err != nil {
		return usageError("--gang-output-selector: %v", err)
	}
	if f.gangCPG && f.gangOutput != string(podgroups.WorkloadAPI) {
		return usageError("--gang-output-composite-pod-group is for --gang-output=workload-api")
	}
	if f.gangVolcanoPolicy && f.gangOutput != string(podgroups.Volcano) {
		return usageError("--gang-output-volcano-subgroup-policy is for --gang-output=volcano")
	}
	if f.podWebhook && f.serve == "" {
		return usageError("--pod-webhook is served on --serve's port: give --serve (and its certificate)")
	}
	return nil
}

// changed reports whether a flag was given; set by newControllerCmd.
func (f *controllerFlags) changed(name string) bool {
	return f.flags != nil && f.flags.Changed(name)
}

// gangRun is the gang output of a karta controller run: none without
// --gang-output.
type gangRun struct {
	ctrl   *gangoutput.Controller
	events record.EventBroadcaster
}

// newGangOutput creates the gang output when --gang-output asks for it.
func newGangOutput(f *controllerFlags, cfg *rest.Config, disco discovery.DiscoveryInterface, dyn dynamic.Interface, shared *sharedWatch,
	reg *interpreter.Registry, log *slog.Logger, metrics prometheus.Registerer, hooks func(*interpreter.Program) gangoutput.Hooks,
	probe func(context.Context) error, references interpreter.Resolver) (*gangRun, error) {
	if f.gangOutput == "" {
		return &gangRun{}, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	skip, _ := gangoutput.ParseKinds(f.gangSkip) // checked
	if !f.changed("gang-output-skip") {
		skip = nil // the target's default
	} else if skip == nil {
		skip = []schema.GroupKind{}
	}
	events := record.NewBroadcaster()
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	gang, err := gangoutput.New(dyn, shared.meta, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), reg, gangoutput.Options{
		Target:      podgroups.Target(f.gangOutput),
		Build:       podgroups.Options{Queue: f.gangQueue, CompositePodGroup: f.gangCPG, VolcanoSubGroupPolicy: f.gangVolcanoPolicy},
		Skip:        skip,
		Selector:    f.gangSelector,
		Logger:      log,
		Registerer:  metrics,
		ServerProbe: probe,
		Recorder:    events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: gangoutput.FieldManager}),
		Standby:     f.leaderElect,
		Hooks:       hooks,
		References:  references,
		Informers:   shared.informers,
	})
	if err != nil {
		events.Shutdown()
		return nil, err
	}
	if f.gangOutput == string(podgroups.WorkloadAPI) && !f.podWebhook {
		log.Warn("gang output workload-api without --pod-webhook: a pod's spec.schedulingGroup can only be set at its creation, so no pod will be linked to its PodGroup")
	}
	log.Info("gang output", "target", f.gangOutput, "skip", strings.Join(gangoutput.FormatKinds(orDefault(skip, f.gangOutput)), ","), "podWebhook", f.podWebhook)
	return &gangRun{ctrl: gang, events: events}, nil
}

func orDefault(skip []schema.GroupKind, target string) []schema.GroupKind {
	if skip == nil {
		return gangoutput.DefaultSkip(podgroups.Target(target))
	}
	return skip
}

// kindChanged tells the gang output of a registry change.
func (g *gangRun) kindChanged(gvk schema.GroupVersionKind, p *interpreter.Program) {
	if g.ctrl != nil {
		g.ctrl.KindChanged(gvk, p)
	}
}

// ready is the gang output's Ready (nil without one).
func (g *gangRun) ready() error {
	if g == nil || g.ctrl == nil {
		return nil
	}
	return g.ctrl.Ready()
}

// stop flushes and stops the event broadcaster.
func (g *gangRun) stop() {
	if g.events != nil {
		g.events.Shutdown()
	}
}
