// Command training-operator runs Kubeflow training-operator v1.9.3's controllers and webhooks
// for the e2e tier.
//
// It is cmd/training-operator.v1/main.go of the release with two differences, both about the
// process rather than what it does to jobs: the webhook server listens on --webhook-host (the
// release binds every interface, and the e2e tier listens on 127.0.0.1 only) with certificates
// from --cert-dir, and the release's certificate rotator (which generates its own CA into a
// Secret) is not started: the test CA signs the certificate and the e2e harness writes the
// webhook configurations with its bundle. Every controller, webhook and default is the
// release's own: controllerv1.SupportedSchemeReconciler, webhooks.SupportedSchemeWebhook,
// config.Config with the release's flag defaults, the gang-scheduler setup functions.
package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	"volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	volcanoclient "volcano.sh/apis/pkg/client/clientset/versioned"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	controllerv1 "github.com/kubeflow/training-operator/pkg/controller.v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/webhooks"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))
}

func main() {
	var probeAddr, gangSchedulerName, webhookHost, certDir string
	var webhookPort, controllerThreads int
	flag.StringVar(&probeAddr, "health-probe-bind-address", "127.0.0.1:8081", "health probes")
	flag.StringVar(&gangSchedulerName, "gang-scheduler-name", "", "volcano or scheduler-plugins")
	flag.IntVar(&controllerThreads, "controller-threads", 1, "worker threads per controller")
	flag.IntVar(&webhookPort, "webhook-server-port", 9443, "webhook port")
	flag.StringVar(&webhookHost, "webhook-host", "127.0.0.1", "webhook address")
	flag.StringVar(&certDir, "cert-dir", "", "folder with tls.crt and tls.key")
	// The release's defaults (cmd/training-operator.v1/main.go).
	config.Config.PyTorchInitContainerImage = config.PyTorchInitContainerImageDefault
	config.Config.PyTorchInitContainerTemplateFile = config.PyTorchInitContainerTemplateFileDefault
	config.Config.PyTorchInitContainerMaxTries = config.PyTorchInitContainerMaxTriesDefault
	config.Config.MPIKubectlDeliveryImage = config.MPIKubectlDeliveryImageDefault
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	cfg := ctrl.GetConfigOrDie()
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(20, 30)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		WebhookServer:          webhook.NewServer(webhook.Options{Host: webhookHost, Port: webhookPort, CertDir: certDir}),
		HealthProbeBindAddress: probeAddr,
	})
	if err != nil {
		setupLog.Error(err, "unable to start manager")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()); err != nil {
		os.Exit(1)
	}

	gangSchedulingSetupFunc := common.GenNonGangSchedulerSetupFunc()
	if strings.EqualFold(gangSchedulerName, string(common.GangSchedulerVolcano)) {
		gangSchedulingSetupFunc = common.GenVolcanoSetupFunc(volcanoclient.NewForConfigOrDie(mgr.GetConfig()))
	} else if gangSchedulerName != "" {
		gangSchedulingSetupFunc = common.GenSchedulerPluginsSetupFunc(mgr.GetClient(), gangSchedulerName)
	}
	// MPIJob is the MPI Operator's (kubeflow.org/v2beta1): its v1 controller here stays off,
	// as the training operator's docs say for clusters running the MPI Operator.
	for _, s := range []string{
		kubeflowv1.TFJobKind, kubeflowv1.PyTorchJobKind, kubeflowv1.XGBoostJobKind,
		kubeflowv1.PaddleJobKind, kubeflowv1.JAXJobKind,
	} {
		setupReconciler, ok := controllerv1.SupportedSchemeReconciler[s]
		setupWebhook, okWebhook := webhooks.SupportedSchemeWebhook[s]
		if !ok || !okWebhook {
			setupLog.Error(errors.New("scheme is not supported"), "scheme", "scheme", s)
			os.Exit(1)
		}
		if err := setupReconciler(mgr, gangSchedulingSetupFunc, controllerThreads); err != nil {
			setupLog.Error(err, "unable to create controller", "scheme", s)
			os.Exit(1)
		}
		if err := setupWebhook(mgr); err != nil {
			setupLog.Error(err, "unable to start webhook server", "scheme", s)
			os.Exit(1)
		}
	}
	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}
