/*
Copyright 2026 The ticketfair Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package render

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
)

// MigrationJobTTL is how long a finished migration Job is kept.
const MigrationJobTTL = 24 * time.Hour

// MigrationJobName changes with the image, so a new release migrates again.
func MigrationJobName(te *ticketsv1alpha1.TicketEvent, opts Options) string {
	sum := sha256.Sum256([]byte(image(te, opts, Migrate) + "\n" + seatingKey(te.Spec.Seating)))
	return te.Name + "-migrate-" + hex.EncodeToString(sum[:])[:8]
}

// migrationJob runs `ticketfair migrate` (schema and seat seeding) with the
// booking configuration, which names the database and the seating.
func migrationJob(te *ticketsv1alpha1.TicketEvent, opts Options, env renderedEnv) *batchv1.Job {
	pod := podSpec(te, opts, Migrate, env, 0)
	pod.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(te, Migrate, MigrationJobName(te, opts)),
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(int32(6)),
			ActiveDeadlineSeconds: ptr.To(int64(900)),
			// Each image and seating has its own Job; finished ones go after a
			// day (time to read a failure's logs) instead of piling up. The
			// reconciler remembers a success in status.migration.
			TTLSecondsAfterFinished: ptr.To(int32(MigrationJobTTL / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(te, Migrate)},
				Spec:       pod,
			},
		},
	}
}
