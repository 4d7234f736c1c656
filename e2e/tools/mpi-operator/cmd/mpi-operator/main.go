// Command mpi-operator runs Kubeflow mpi-operator v0.8.2's MPIJob controller for the e2e tier.
//
// It is cmd/mpi-operator/app/server.go Run of the release without what concerns the process
// only: the health server (the release listens on every interface, port 8080, and the e2e
// tier listens on 127.0.0.1 only) and leader election (one replica). The controller, its
// informers and options are the release's: options.NewServerOption with its flags,
// controllersv1.NewMPIJobController, the same informer factories.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgokubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	schedclientset "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned"
	volcanoclient "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	mpijobclientset "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned"
	kubeflowscheme "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/scheme"
	informers "github.com/kubeflow/mpi-operator/pkg/client/informers/externalversions"
	controllersv1 "github.com/kubeflow/mpi-operator/pkg/controller"
)

func main() {
	opt := options.NewServerOption()
	opt.AddFlags(flag.CommandLine)
	flag.Parse()
	if err := kubeflowscheme.AddToScheme(clientgokubescheme.Scheme); err != nil {
		klog.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags(opt.MasterURL, os.Getenv("KUBECONFIG"))
	if err != nil {
		klog.Fatalf("kubeconfig: %v", err)
	}
	cfg.QPS = float32(opt.QPS)
	cfg.Burst = opt.Burst
	kubeClient := kubernetes.NewForConfigOrDie(rest.AddUserAgent(cfg, "mpi-operator"))
	mpiJobClient := mpijobclientset.NewForConfigOrDie(cfg)
	var volcano volcanoclient.Interface
	var sched schedclientset.Interface
	if opt.GangSchedulingName == options.GangSchedulerVolcano {
		volcano = volcanoclient.NewForConfigOrDie(rest.AddUserAgent(cfg, "volcano"))
	} else if opt.GangSchedulingName != "" {
		sched = schedclientset.NewForConfigOrDie(rest.AddUserAgent(cfg, "scheduler-plugins"))
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	var kubeOpts []kubeinformers.SharedInformerOption
	var kubeflowOpts []informers.SharedInformerOption
	if opt.Namespace != "" {
		kubeOpts = append(kubeOpts, kubeinformers.WithNamespace(opt.Namespace))
		kubeflowOpts = append(kubeflowOpts, informers.WithNamespace(opt.Namespace))
	}
	kubeInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0, kubeOpts...)
	kubeflowInformers := informers.NewSharedInformerFactoryWithOptions(mpiJobClient, 0, kubeflowOpts...)
	controller, err := controllersv1.NewMPIJobController(
		ctx,
		kubeClient,
		mpiJobClient,
		volcano,
		sched,
		kubeInformers.Core().V1().ConfigMaps(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().Services(),
		kubeInformers.Batch().V1().Jobs(),
		kubeInformers.Core().V1().Pods(),
		kubeInformers.Scheduling().V1().PriorityClasses(),
		kubeflowInformers.Kubeflow().V2beta1().MPIJobs(),
		opt)
	if err != nil {
		klog.Fatalf("Failed to setup the controller: %v", err)
	}
	go kubeInformers.Start(ctx.Done())
	go kubeflowInformers.Start(ctx.Done())
	if controller.PodGroupCtrl != nil {
		controller.PodGroupCtrl.StartInformerFactory(ctx.Done())
	}
	if err := controller.Run(opt.Threadiness, ctx.Done()); err != nil {
		klog.Fatalf("Error running controller: %v", err)
	}
}
