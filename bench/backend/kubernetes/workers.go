package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/monolock/monolock-bench/bench"
)

// workerJobs numbers the worker Jobs of a run.
var workerJobs atomic.Int64

// RunWorkers implements bench.WorkerRunner: an indexed Job of n pods of
// the bench's own image, in parallel (k6-operator's parallelism), each
// told its index in $JOB_COMPLETION_INDEX and preferring a node of its
// own; their outputs are read from the pods' logs. The Job is deleted
// before it returns.
func (d *Deployment) RunWorkers(ctx context.Context, n int, arg string) ([]bench.WorkerOutput, error) {
	if n < 1 {
		return nil, fmt.Errorf("kubernetes: %d workers", n)
	}
	name := "workers-" + strconv.FormatInt(workerJobs.Add(1), 10)
	labels := map[string]string{labelManagedBy: managedBy, labelRun: d.run, "monolock-bench/job": name}
	count := int32(n)
	none := int32(0)
	indexed := batchv1.IndexedCompletion
	no := false
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: batchv1.JobSpec{
			Parallelism: &count, Completions: &count, CompletionMode: &indexed, BackoffLimit: &none,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &no,
					EnableServiceLinks:           &no,
					Affinity:                     spreadOver(map[string]string{"monolock-bench/job": name}),
					Containers: []corev1.Container{{
						Name: "worker", Image: d.agentImage, ImagePullPolicy: corev1.PullNever,
						Command: []string{"/monolock-bench", "worker", arg},
					}},
				},
			},
		},
	}
	jobs := d.c.api.BatchV1().Jobs(d.namespace)
	if _, err := jobs.Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("kubernetes: create job %s: %w", name, err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		background := metav1.DeletePropagationBackground
		jobs.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	}()
	var failed string
	err := poll(ctx, 24*time.Hour, func() (bool, error) { // ctx bounds it
		j, err := jobs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case batchv1.JobComplete:
				return true, nil
			case batchv1.JobFailed:
				failed = c.Reason + ": " + c.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: %w", name, err)
	}
	pods, err := d.c.api.CoreV1().Pods(d.namespace).List(ctx, metav1.ListOptions{LabelSelector: "monolock-bench/job=" + name})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: pods of job %s: %w", name, err)
	}
	outs := make([]bench.WorkerOutput, n)
	var errs []error
	for _, p := range pods.Items {
		i, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil || i < 0 || i >= n {
			continue
		}
		log, err := d.c.api.CoreV1().Pods(d.namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "worker"}).DoRaw(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("kubernetes: log of worker %d: %w", i, err))
			continue
		}
		if p.Status.Phase != corev1.PodSucceeded {
			errs = append(errs, fmt.Errorf("kubernetes: worker %d: %s: %s", i, podProblem(&p), lastLine(log)))
			continue
		}
		outs[i] = bench.WorkerOutput{Index: i, Node: p.Spec.NodeName, Stdout: log}
	}
	if failed != "" {
		errs = append(errs, fmt.Errorf("kubernetes: job %s failed: %s", name, failed))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, o := range outs {
		if o.Stdout == nil {
			return nil, fmt.Errorf("kubernetes: job %s: no pod of worker %d", name, i)
		}
	}
	return outs, nil
}

// lastLine is the last non-empty line of b.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
