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
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	ticketsv1alpha1 "github.com/ticketfair/ticketfair/api/v1alpha1"
	"github.com/ticketfair/ticketfair/workloads/config"
)

// The seating reaches booking and the migration Job in one of three ways,
// after spec.seating's form (see ticketsv1alpha1.Seating):
//
//   - the shorthand as TICKETFAIR_SEATING ("name:price:rows:seatsPerRow;..."),
//     exactly as before the venue model;
//   - an inline venue as TICKETFAIR_VENUE, the JSON of config.Venue that
//     config.VenueOf maps from the spec;
//   - seating.venueFrom as TICKETFAIR_VENUE_FILE, the path at which the
//     ConfigMap's key is mounted read-only (VenueMountPath).
const (
	// VenueVolume names the volume of seating.venueFrom's ConfigMap.
	VenueVolume = "venue"
	// VenueMountDir is where that volume is mounted.
	VenueMountDir = "/etc/ticketfair/venue"
	// VenueMountPath is the file booking and migrate read the venue from.
	VenueMountPath = VenueMountDir + "/venue.json"
)

// bookingSeating sets booking's seating from spec.seating: one of Seating,
// Venue and VenueFile.
func bookingSeating(b *config.Booking, s ticketsv1alpha1.Seating) error {
	b.Seating, b.Venue, b.VenueFile = "", "", ""
	v, ok, err := config.VenueOf(s)
	switch {
	case err != nil:
		return err
	case ok:
		j, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("spec.seating: %w", err)
		}
		b.Venue = string(j)
	case s.VenueFrom != nil:
		b.VenueFile = VenueMountPath
	default:
		b.Seating = Seating(s.Sections)
	}
	return nil
}

// seatingKey is what the migration Job's name hashes of the seating: the
// shorthand as before (so its Jobs keep their names), the venue's JSON, or
// the ConfigMap key of venueFrom, whose content the operator does not read.
func seatingKey(s ticketsv1alpha1.Seating) string {
	if v, ok, err := config.VenueOf(s); err == nil && ok {
		if j, err := json.Marshal(v); err == nil {
			return "venue\n" + string(j)
		}
	}
	if f := s.VenueFrom; f != nil {
		return "venueFrom\n" + f.ConfigMapKeyRef.Name + "\n" + f.ConfigMapKeyRef.Key
	}
	return Seating(s.Sections)
}

// venuePlaces counts the places of an inline venue; ok is false for the
// shorthand and for venueFrom (whose ConfigMap the operator does not read:
// 0 places).
func venuePlaces(s ticketsv1alpha1.Seating) (int64, bool) {
	if s.VenueFrom != nil {
		return 0, true
	}
	v, ok, err := config.VenueOf(s)
	if err != nil || !ok {
		return 0, false
	}
	return v.Places(), true
}

// mountVenue mounts seating.venueFrom's ConfigMap key read-only at
// VenueMountPath in the pods of booking and of the migration Job.
func mountVenue(te *ticketsv1alpha1.TicketEvent, c Component, spec *corev1.PodSpec) {
	f := te.Spec.Seating.VenueFrom
	if f == nil || (c != Booking && c != Migrate) {
		return
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: VenueVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: f.ConfigMapKeyRef.Name},
			Items:                []corev1.KeyToPath{{Key: f.ConfigMapKeyRef.Key, Path: "venue.json"}},
			DefaultMode:          ptr.To(int32(0o444)),
		}},
	})
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts,
			corev1.VolumeMount{Name: VenueVolume, MountPath: VenueMountDir, ReadOnly: true})
	}
}
