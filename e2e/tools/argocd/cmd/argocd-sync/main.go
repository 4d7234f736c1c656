// Command argocd-sync runs one automated sync of an Argo CD Application, the way Argo CD
// v3.6.1's application controller runs it, on Argo CD's own sync engine (gitops-engine v3.6.1,
// the version Argo CD v3.6.1 is built with).
//
// Argo CD's controller needs Redis and a repo server beside it, so the e2e tier drives the
// engine itself. This program does what the controller does around the engine, following
// argo-cd v3.6.1:
//
//   - controller/appcontroller.go autoSync: skip when in sync; an automated sync of the
//     revision last synced successfully syncs only what is out of sync (selfHeal), a revision
//     whose last attempt failed is not tried again; refuse to prune every resource unless
//     allowEmpty;
//   - controller/state.go CompareAppState: the manifests kustomize builds from the source path
//     (what the repo server runs), each given the annotation tracking id
//     (util/argo/resource_tracking.go SetAppInstance, "<app>:<group>/<kind>:<namespace>/<name>"),
//     live objects those of the cluster this Application tracks (isSelfReferencedObj), diffed
//     after spec.ignoreDifferences (util/argo/normalizers NewIgnoreNormalizer: a jq del() per
//     jqPathExpression, a JSON patch remove per jsonPointer);
//   - controller/sync.go SyncAppState: the engine's options from spec.syncPolicy.syncOptions
//     (Prune, Replace, ServerSideApply, ApplyOutOfSyncOnly, PruneLast, PrunePropagationPolicy,
//     CreateNamespace, Validate), field manager argocd-controller, two seconds between sync
//     waves (ARGOCD_SYNC_WAVE_DELAY);
//   - the operation's retry (spec.syncPolicy.retry, or 5 retries): a failed attempt is run
//     again after the backoff, up to the limit. --backoff-scale shortens the waits (the e2e
//     tier's only liberty: time).
//
// It reads the Application's file (kubetrain renders it), the repository's checkout at the
// revision being synced, and a state file holding the last attempt (revision and phase) that
// the controller keeps in the Application's status. It prints one JSON report on stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/tracing"
	jsonpatch "github.com/evanphx/json-patch"
	"github.com/go-logr/logr"
	"github.com/itchyny/gojq"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	trackingAnnotation = "argocd.argoproj.io/tracking-id"
	ssaManager         = "argocd-controller"
	waveDelay          = 2 * time.Second
)

type application struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Destination struct {
			Namespace string `json:"namespace"`
		} `json:"destination"`
		Source struct {
			Path string `json:"path"`
		} `json:"source"`
		IgnoreDifferences []ignoreDifference `json:"ignoreDifferences"`
		SyncPolicy        *struct {
			Automated *struct {
				Prune      bool `json:"prune"`
				SelfHeal   bool `json:"selfHeal"`
				AllowEmpty bool `json:"allowEmpty"`
			} `json:"automated"`
			SyncOptions []string `json:"syncOptions"`
			Retry       *struct {
				Limit   int64 `json:"limit"`
				Backoff *struct {
					Duration    string `json:"duration"`
					Factor      *int64 `json:"factor"`
					MaxDuration string `json:"maxDuration"`
				} `json:"backoff"`
			} `json:"retry"`
			ManagedNamespaceMetadata *struct {
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"managedNamespaceMetadata"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

type ignoreDifference struct {
	Group             string   `json:"group"`
	Kind              string   `json:"kind"`
	Name              string   `json:"name"`
	Namespace         string   `json:"namespace"`
	JSONPointers      []string `json:"jsonPointers"`
	JQPathExpressions []string `json:"jqPathExpressions"`
}

// lastAttempt is what the controller keeps of the last operation in the Application's status.
type lastAttempt struct {
	Revision string `json:"revision"`
	Phase    string `json:"phase"`
}

type resourceReport struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	SyncPhase string `json:"syncPhase"`
	Wave      string `json:"hookPhase,omitempty"`
}

type report struct {
	// Action: "synced" (an operation ran), "in-sync" (nothing to do), "skipped" (the controller
	// would not sync: the reason says why).
	Action    string           `json:"action"`
	Reason    string           `json:"reason,omitempty"`
	Phase     string           `json:"phase,omitempty"`
	Message   string           `json:"message,omitempty"`
	Attempts  int              `json:"attempts"`
	OutOfSync []string         `json:"outOfSync"`
	Resources []resourceReport `json:"resources"`
}

func main() {
	var (
		kubeconfig   = flag.String("kubeconfig", "", "kubeconfig of the destination cluster")
		appFile      = flag.String("app", "", "the Application's YAML file")
		repo         = flag.String("repo", "", "checkout of the source repository")
		revision     = flag.String("revision", "", "the revision being synced (a commit)")
		stateFile    = flag.String("state", "", "file keeping the last attempt (created)")
		backoffScale = flag.Float64("backoff-scale", 1, "multiply retry backoffs by this")
		timeout      = flag.Duration("timeout", 10*time.Minute, "give up after this long")
	)
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	out, err := run(ctx, *kubeconfig, *appFile, *repo, *revision, *stateFile, *backoffScale)
	if out != nil {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-sync:", err)
		os.Exit(2)
	}
	if out.Action == "synced" && out.Phase != string(common.OperationSucceeded) {
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, appFile, repo, revision, stateFile string, backoffScale float64) (*report, error) {
	data, err := os.ReadFile(appFile)
	if err != nil {
		return nil, err
	}
	var app application
	if err := yaml.Unmarshal(data, &app); err != nil {
		return nil, fmt.Errorf("%s: %w", appFile, err)
	}
	if app.Spec.SyncPolicy == nil || app.Spec.SyncPolicy.Automated == nil {
		return nil, errors.New("the Application has no automated sync policy")
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The controller's client limits (pkg/apis/application/v1alpha1 SetK8SConfigDefaults:
	// K8sClientConfigQPS 50, K8sClientConfigBurst 100); client-go's own 5/10 throttled the
	// cluster cache's first sync for tens of seconds.
	config.QPS = 50
	config.Burst = 100
	log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(0)))
	appName := app.Metadata.Name
	namespace := app.Spec.Destination.Namespace

	targets, err := build(filepath.Join(repo, app.Spec.Source.Path))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", app.Spec.Source.Path, err)
	}

	clusterCache := cache.NewClusterCache(config,
		cache.SetLogr(log),
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			return trackedApp(un), true
		}),
	)
	if err := clusterCache.EnsureSynced(); err != nil {
		return nil, fmt.Errorf("cluster cache: %w", err)
	}
	defer clusterCache.Invalidate()

	for _, t := range targets {
		namespaced, err := clusterCache.IsNamespaced(t.GroupVersionKind().GroupKind())
		if err == nil && namespaced && t.GetNamespace() == "" {
			t.SetNamespace(namespace)
		}
		setTrackingID(t, appName, namespace)
	}

	state := lastAttempt{}
	if raw, err := os.ReadFile(stateFile); err == nil {
		_ = json.Unmarshal(raw, &state)
	}

	normalizer, err := newIgnoreNormalizer(app.Spec.IgnoreDifferences)
	if err != nil {
		return nil, err
	}
	options := syncOptions(app.Spec.SyncPolicy.SyncOptions)
	automated := app.Spec.SyncPolicy.Automated

	compare := func() (sync.ReconciliationResult, *diff.DiffResultList, []string, bool, error) {
		live, err := clusterCache.GetManagedLiveObjs(targets, func(r *cache.Resource) bool {
			return r.Info == appName && selfReferenced(r.Resource)
		})
		if err != nil {
			return sync.ReconciliationResult{}, nil, nil, false, err
		}
		result := sync.Reconcile(targets, live, namespace, clusterCache)
		diffs, err := diff.DiffArray(ctx, result.Target, result.Live,
			diff.WithNormalizer(normalizer),
			diff.WithLogr(log),
			diff.IgnoreAggregatedRoles(false),
			diff.WithManager(ssaManager),
		)
		if err != nil {
			return result, nil, nil, false, err
		}
		var outOfSync []string
		allPrune := true
		for i := range result.Target {
			target, liveObj := result.Target[i], result.Live[i]
			if target != nil {
				allPrune = false
			}
			if diffs.Diffs[i].Modified || target == nil || liveObj == nil {
				obj := target
				if obj == nil {
					obj = liveObj
				}
				outOfSync = append(outOfSync, keyString(kube.GetResourceKey(obj)))
			}
		}
		sort.Strings(outOfSync)
		return result, diffs, outOfSync, allPrune && len(result.Live) > 0, nil
	}

	_, _, outOfSync, allPrune, err := compare()
	if err != nil {
		return nil, err
	}
	rep := &report{OutOfSync: outOfSync}
	if len(outOfSync) == 0 {
		rep.Action = "in-sync"
		return rep, nil
	}
	selfHealOnly := false
	if state.Revision == revision {
		if state.Phase != string(common.OperationSucceeded) {
			rep.Action, rep.Reason = "skipped", "failed previous sync attempt to "+revision+" and will not retry"
			return rep, nil
		}
		if !automated.SelfHeal {
			rep.Action, rep.Reason = "skipped", "most recent sync already to "+revision
			return rep, nil
		}
		selfHealOnly = true
	}
	if automated.Prune && !automated.AllowEmpty && allPrune {
		rep.Action, rep.Reason = "skipped", "auto-sync will wipe out all resources"
		return rep, nil
	}
	selected := map[string]bool{}
	for _, k := range outOfSync {
		selected[k] = true
	}

	retry := retryStrategy(app)
	rep.Action = "synced"
	for attempt := int64(0); ; attempt++ {
		rep.Attempts = int(attempt + 1)
		phase, message, results, err := operation(ctx, config, log, appName, revision, namespace, options, automated.Prune, app, compare, func(key kube.ResourceKey) bool {
			return !selfHealOnly || selected[keyString(key)]
		})
		if err != nil {
			return nil, err
		}
		rep.Phase, rep.Message, rep.Resources = string(phase), message, results
		if phase == common.OperationSucceeded || (retry.limit >= 0 && attempt >= retry.limit) {
			break
		}
		time.Sleep(time.Duration(float64(retry.wait(attempt)) * backoffScale))
	}
	raw, _ := json.Marshal(lastAttempt{Revision: revision, Phase: rep.Phase})
	if err := os.WriteFile(stateFile, raw, 0o600); err != nil {
		return nil, err
	}
	return rep, nil
}

// operation runs one sync operation to its end, as SyncAppState (controller/sync.go) is called
// for it on every reconcile: a fresh comparison, and a sync context resumed from the
// operation's state (sync.WithInitialState).
func operation(
	ctx context.Context,
	config *rest.Config,
	log logr.Logger,
	appName, revision, namespace string,
	options map[string]string,
	prune bool,
	app application,
	compare func() (sync.ReconciliationResult, *diff.DiffResultList, []string, bool, error),
	selected func(kube.ResourceKey) bool,
) (common.OperationPhase, string, []resourceReport, error) {
	kubectl := &kube.KubectlCmd{Log: log, Tracer: tracing.NopTracer{}}
	phase, message := common.OperationRunning, ""
	var results []common.ResourceSyncResult
	started := metav1.Now()
	has := func(option string) bool {
		name, value, _ := strings.Cut(option, "=")
		return options[name] == value
	}
	policy := metav1.DeletePropagationForeground
	switch options["PrunePropagationPolicy"] {
	case "background":
		policy = metav1.DeletePropagationBackground
	case "orphan":
		policy = metav1.DeletePropagationOrphan
	}
	var defaultPrune *string
	if value, ok := options["Prune"]; ok {
		defaultPrune = &value
	}
	stuck := 0
	for {
		result, diffs, _, _, err := compare()
		if err != nil {
			return "", "", nil, err
		}
		opts := []sync.SyncOpt{
			sync.WithLogr(log),
			sync.WithOperationSettings(false, prune, false, false),
			sync.WithInitialState(phase, message, results, started),
			sync.WithResourcesFilter(func(key kube.ResourceKey, target, live *unstructured.Unstructured) bool {
				return selected(key) && selfReferencedPair(live, target, appName)
			}),
			sync.WithManifestValidation(!has("Validate=false")),
			sync.WithSyncWaveHook(func(_ common.SyncPhase, _ int, final bool) error {
				if !final {
					time.Sleep(waveDelay)
				}
				return nil
			}),
			sync.WithPruneLast(has("PruneLast=true")),
			sync.WithResourceModificationChecker(has("ApplyOutOfSyncOnly=true"), diffs),
			sync.WithPrunePropagationPolicy(&policy),
			sync.WithReplace(has("Replace=true")),
			sync.WithServerSideApply(has("ServerSideApply=true")),
			sync.WithServerSideApplyManager(ssaManager),
			sync.WithClientSideApplyMigration(!has("DisableClientSideApplyMigration=true"), "kubectl-client-side-apply"),
			sync.WithPruneConfirmed(false),
			sync.WithDefaultPruneOption(defaultPrune),
			sync.WithSkipDryRunOnMissingResource(has("SkipDryRunOnMissingResource=true")),
		}
		if has("CreateNamespace=true") {
			opts = append(opts, sync.WithNamespaceModifier(syncNamespace(app)))
		}
		syncCtx, cleanup, err := sync.NewSyncContext(revision, result, config, config, kubectl, namespace, opts...)
		if err != nil {
			return "", "", nil, fmt.Errorf("failed to initialize sync context: %w", err)
		}
		syncCtx.Sync(ctx)
		phase, message, results = syncCtx.GetState()
		if !phase.Completed() && waitsOnRefused(message, results) {
			stuck++
		} else {
			stuck = 0
		}
		if stuck >= stuckRounds {
			// gitops-engine's Sync waits for every running task of a multi-step sync to be
			// healthy before it reports a failed one (sync_context.go Sync: "if we are
			// multi-step and we have any running tasks ... wait"): a refused edit beside a
			// training Job keeps the operation Running until that Job ends, and Argo CD starts
			// no other sync meanwhile. A user ends it with `argocd app terminate-op`, which is
			// Terminate: the operation fails, and the next commit is synced.
			syncCtx.Terminate(ctx)
			phase, _, results = syncCtx.GetState()
			message = "terminated (argocd app terminate-op) while " + message +
				", after one or more tasks failed"
			cleanup()
			break
		}
		cleanup()
		if phase.Completed() {
			break
		}
		select {
		case <-ctx.Done():
			return common.OperationError, "timed out", reports(results), nil
		case <-time.After(time.Second):
		}
	}
	return phase, message, reports(results), nil
}

// stuckRounds: how many rounds in a row the operation must wait on health with a task failed
// before it is terminated (it would wait until the training Jobs end).
const stuckRounds = 5

// waitsOnRefused: the operation waits for the health of running tasks while a task has already
// failed (every task applied or refused; nothing left but waiting).
func waitsOnRefused(message string, results []common.ResourceSyncResult) bool {
	if !strings.HasPrefix(message, "waiting for healthy state of") {
		return false
	}
	for _, r := range results {
		if r.Status == common.ResultCodeSyncFailed || r.HookPhase == common.OperationFailed {
			return true
		}
	}
	return false
}

func reports(results []common.ResourceSyncResult) []resourceReport {
	out := make([]resourceReport, 0, len(results))
	for _, r := range results {
		out = append(out, resourceReport{
			Group: r.ResourceKey.Group, Kind: r.ResourceKey.Kind,
			Namespace: r.ResourceKey.Namespace, Name: r.ResourceKey.Name,
			Status: string(r.Status), Message: r.Message, SyncPhase: string(r.SyncPhase),
		})
	}
	return out
}

// syncNamespace follows controller/sync_namespace.go syncNamespace: the destination namespace
// is created when missing, and its metadata kept when managedNamespaceMetadata is set.
func syncNamespace(app application) func(managed, live *unstructured.Unstructured) (bool, error) {
	return func(managed, live *unstructured.Unstructured) (bool, error) {
		if managed == nil {
			return false, nil
		}
		meta := app.Spec.SyncPolicy.ManagedNamespaceMetadata
		if meta == nil && live != nil {
			return false, nil
		}
		if meta != nil {
			managed.SetLabels(meta.Labels)
			annotations := map[string]string{}
			for k, v := range meta.Annotations {
				annotations[k] = v
			}
			annotations[common.AnnotationSyncOptions] = common.SyncOptionServerSideApply
			managed.SetAnnotations(annotations)
		}
		return true, nil
	}
}

type retry struct {
	limit                 int64
	duration, maxDuration time.Duration
	factor                int64
}

// retryStrategy is the automated operation's (appcontroller.go autoSync: 5 retries unless
// spec.syncPolicy.retry says otherwise; v1alpha1 defaults 5s, factor 2, at most 3m).
func retryStrategy(app application) retry {
	r := retry{limit: 5, duration: 5 * time.Second, maxDuration: 3 * time.Minute, factor: 2}
	spec := app.Spec.SyncPolicy.Retry
	if spec == nil {
		return r
	}
	r.limit = spec.Limit
	if b := spec.Backoff; b != nil {
		if d, err := time.ParseDuration(b.Duration); err == nil && b.Duration != "" {
			r.duration = d
		}
		if d, err := time.ParseDuration(b.MaxDuration); err == nil && b.MaxDuration != "" {
			r.maxDuration = d
		}
		if b.Factor != nil {
			r.factor = *b.Factor
		}
	}
	return r
}

// wait follows RetryStrategy.NextRetryAt: duration * factor^retries, at most maxDuration.
func (r retry) wait(retries int64) time.Duration {
	wait := float64(r.duration) * math.Pow(float64(r.factor), float64(retries))
	if r.maxDuration > 0 {
		wait = math.Min(float64(r.maxDuration), wait)
	}
	return time.Duration(wait)
}

// build is what the repo server does for a kustomization: kustomize build of the path.
func build(path string) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), path)
	if err != nil {
		return nil, err
	}
	data, err := resMap.AsYaml()
	if err != nil {
		return nil, err
	}
	return kube.SplitYAML(data)
}

func setTrackingID(un *unstructured.Unstructured, appName, namespace string) {
	ns := un.GetNamespace()
	if ns == "" {
		ns = namespace
	}
	gvk := un.GroupVersionKind()
	annotations := un.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[trackingAnnotation] = fmt.Sprintf("%s:%s/%s:%s/%s", appName, gvk.Group, gvk.Kind, ns, un.GetName())
	un.SetAnnotations(annotations)
}

type trackingID struct{ app, group, kind, namespace, name string }

// parseTrackingID follows resourceTracking.ParseAppInstanceValue.
func parseTrackingID(value string) (trackingID, bool) {
	parts := strings.SplitN(value, ":", 3)
	if len(parts) != 3 {
		return trackingID{}, false
	}
	group, kind, ok1 := strings.Cut(parts[1], "/")
	ns, name, ok2 := strings.Cut(parts[2], "/")
	if !ok1 || !ok2 || strings.Contains(kind, "/") || strings.Contains(name, "/") {
		return trackingID{}, false
	}
	return trackingID{parts[0], group, kind, ns, name}, true
}

// trackedApp is the Application an object's tracking id names ("" if none).
func trackedApp(un *unstructured.Unstructured) string {
	id, ok := parseTrackingID(un.GetAnnotations()[trackingAnnotation])
	if !ok {
		return ""
	}
	return id.app
}

// selfReferenced follows controller/state.go isSelfReferencedObj with no desired object: the
// tracking id names this very object (a copy of another's annotations does not count).
// Cluster-scoped objects carry the destination namespace in their id: only group, kind and
// name are compared for them.
func selfReferenced(un *unstructured.Unstructured) bool {
	if un == nil {
		return true
	}
	id, ok := parseTrackingID(un.GetAnnotations()[trackingAnnotation])
	if !ok {
		return true
	}
	gvk := un.GroupVersionKind()
	return id.group == gvk.Group && id.kind == gvk.Kind && id.name == un.GetName() &&
		(un.GetNamespace() == "" || id.namespace == un.GetNamespace())
}

// selfReferencedPair is isSelfReferencedObj with the desired object when there is one.
func selfReferencedPair(live, target *unstructured.Unstructured, appName string) bool {
	if live == nil {
		return true
	}
	if target != nil {
		id, ok := parseTrackingID(live.GetAnnotations()[trackingAnnotation])
		if !ok {
			return true
		}
		gvk := target.GroupVersionKind()
		return id.app == appName && id.group == gvk.Group && id.kind == gvk.Kind && id.name == target.GetName() &&
			(live.GetNamespace() == "" || id.namespace == live.GetNamespace())
	}
	return selfReferenced(live)
}

func keyString(k kube.ResourceKey) string {
	return fmt.Sprintf("%s/%s/%s/%s", k.Group, k.Kind, k.Namespace, k.Name)
}

// syncOptions parses "Name=value" sync options (later ones win, as HasOption reads them).
func syncOptions(list []string) map[string]string {
	out := map[string]string{}
	for _, option := range list {
		name, value, _ := strings.Cut(option, "=")
		out[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return out
}

// ignoreNormalizer follows util/argo/normalizers NewIgnoreNormalizer: for every entry of
// spec.ignoreDifferences that matches an object's group, kind (globs), name and namespace, a
// JSON patch "remove" per jsonPointer and a jq "del(...)" per jqPathExpression, applied in turn;
// an entry that does not apply is skipped.
type ignoreNormalizer struct {
	patches []ignorePatch
}

type ignorePatch struct {
	group, kind, name, namespace string
	apply                        func([]byte) ([]byte, error)
}

func newIgnoreNormalizer(ignore []ignoreDifference) (diff.Normalizer, error) {
	n := &ignoreNormalizer{}
	for _, entry := range ignore {
		for _, pointer := range entry.JSONPointers {
			raw, _ := json.Marshal([]map[string]string{{"op": "remove", "path": pointer}})
			patch, err := jsonpatch.DecodePatch(raw)
			if err != nil {
				return nil, err
			}
			n.patches = append(n.patches, ignorePatch{entry.Group, entry.Kind, entry.Name, entry.Namespace, patch.Apply})
		}
		for _, expression := range entry.JQPathExpressions {
			query, err := gojq.Parse(fmt.Sprintf("del(%s)", expression))
			if err != nil {
				return nil, err
			}
			code, err := gojq.Compile(query)
			if err != nil {
				return nil, err
			}
			n.patches = append(n.patches, ignorePatch{entry.Group, entry.Kind, entry.Name, entry.Namespace, jqApply(code)})
		}
	}
	return n, nil
}

func jqApply(code *gojq.Code) func([]byte) ([]byte, error) {
	return func(data []byte) ([]byte, error) {
		doc := map[string]any{}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		iter := code.RunWithContext(ctx, doc)
		first, ok := iter.Next()
		if !ok {
			return nil, errors.New("JQ patch did not return any data")
		}
		if err, isErr := first.(error); isErr {
			return nil, err
		}
		if _, more := iter.Next(); more {
			return nil, errors.New("JQ patch returned multiple objects")
		}
		return json.Marshal(first)
	}
}

func (n *ignoreNormalizer) Normalize(un *unstructured.Unstructured) error {
	if un == nil {
		return errors.New("invalid argument: unstructured is nil")
	}
	gk := un.GroupVersionKind().GroupKind()
	var matched []ignorePatch
	for _, p := range n.patches {
		if glob(p.group, gk.Group) && glob(p.kind, gk.Kind) &&
			(p.name == "" || p.name == un.GetName()) &&
			(p.namespace == "" || p.namespace == un.GetNamespace()) {
			matched = append(matched, p)
		}
	}
	if len(matched) == 0 {
		return nil
	}
	data, err := json.Marshal(un)
	if err != nil {
		return err
	}
	for _, p := range matched {
		if patched, err := p.apply(data); err == nil {
			data = patched
		}
	}
	return json.Unmarshal(data, un)
}

// glob matches as util/glob.Match does for the patterns kubetrain writes: "*" or an exact value.
func glob(pattern, value string) bool {
	if pattern == "*" {
		return true
	}
	if ok, err := filepath.Match(pattern, value); err == nil && ok {
		return true
	}
	return pattern == value
}
