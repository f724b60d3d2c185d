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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TicketEventSpec describes one sale: the event, its seating, and how people
// are admitted from the waiting room into seat selection.
// +kubebuilder:validation:XValidation:rule="!has(self.payment) || !has(self.holds) || duration(self.payment.timeout) < duration(self.holds.ttl)",message="payment.timeout must be shorter than holds.ttl, so a payment cannot complete after its hold expired"
type TicketEventSpec struct {
	// EventID is the numeric id of the event used in the REST paths
	// (/events/{eventId}/...). It cannot be changed once set.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="eventId is immutable"
	EventID int64 `json:"eventId"`

	// DisplayName is the name shown to customers.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	DisplayName string `json:"displayName"`

	// SalesOpenAt is when the pre-queue closes, is shuffled, and admission starts.
	SalesOpenAt metav1.Time `json:"salesOpenAt"`

	// Seating is the event's seat inventory. It cannot be changed once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="seating is immutable once set: seats may already be held or sold"
	Seating Seating `json:"seating"`

	// Admission controls how people move from the waiting room into seat selection.
	// Changes reach the running admitter within seconds, without restarting pods.
	// +kubebuilder:default={}
	// +optional
	Admission Admission `json:"admission,omitempty"`

	// Holds controls seat holds.
	// +kubebuilder:default={}
	// +optional
	Holds Holds `json:"holds,omitempty"`

	// Payment configures the payment provider callback.
	// +kubebuilder:default={}
	// +optional
	Payment Payment `json:"payment,omitempty"`
}

// Seating lists the sections of the venue.
type Seating struct {
	// Sections of the venue; seat ids are "<section>-<row>-<seat>".
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	Sections []Section `json:"sections"`
}

// Section is a block of seats that share a price.
type Section struct {
	// Name of the section, used as the prefix of its seat ids.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]{1,16}$`
	Name string `json:"name"`
	// Price of one seat as a decimal string, e.g. "89.50".
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}(\.[0-9]{1,2})?$`
	Price string `json:"price"`
	// Rows in the section.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Rows int32 `json:"rows"`
	// SeatsPerRow is the number of seats in each row.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	SeatsPerRow int32 `json:"seatsPerRow"`
}

// PreQueueOrder says how the people who joined before sales opened are ordered.
// +kubebuilder:validation:Enum=Shuffle;FIFO
type PreQueueOrder string

const (
	// PreQueueShuffle draws the pre-queue's order uniformly at random at opening.
	PreQueueShuffle PreQueueOrder = "Shuffle"
	// PreQueueFIFO keeps the pre-queue in arrival order.
	PreQueueFIFO PreQueueOrder = "FIFO"
)

// Admission controls the waiting room.
type Admission struct {
	// MaxActive is the most people in seat selection at once.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=5000
	// +optional
	MaxActive int32 `json:"maxActive,omitempty"`
	// RatePerSecond is the most people admitted per second.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=500
	// +optional
	RatePerSecond int32 `json:"ratePerSecond,omitempty"`
	// TickInterval is how often the admitter admits a batch.
	// +kubebuilder:default="1s"
	// +optional
	TickInterval *metav1.Duration `json:"tickInterval,omitempty"`
	// TokenTTL is how long an access token (and its session) lasts.
	// +kubebuilder:default="10m"
	// +optional
	TokenTTL *metav1.Duration `json:"tokenTTL,omitempty"`
	// ClaimTimeout is how long an admitted person has to pick up the access token before the slot goes to the next.
	// +kubebuilder:default="60s"
	// +optional
	ClaimTimeout *metav1.Duration `json:"claimTimeout,omitempty"`
	// PreQueue orders the people who joined before sales opened.
	// +kubebuilder:default=Shuffle
	// +optional
	PreQueue PreQueueOrder `json:"preQueue,omitempty"`
	// Paused stops admission; joins are still accepted.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// Holds controls seat holds.
type Holds struct {
	// TTL is how long held seats stay reserved for payment.
	// +kubebuilder:default="5m"
	// +optional
	TTL *metav1.Duration `json:"ttl,omitempty"`
	// MaxSeatsPerCustomer limits the seats one customer may hold or buy.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=4
	// +optional
	MaxSeatsPerCustomer int32 `json:"maxSeatsPerCustomer,omitempty"`
}

// Payment configures the payment provider.
type Payment struct {
	// Timeout is how long the payment provider may take; shorter than holds.ttl.
	// +kubebuilder:default="4m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// WebhookSecretRef selects the key of a Secret holding the webhook signing secret.
	// +optional
	WebhookSecretRef *corev1.SecretKeySelector `json:"webhookSecretRef,omitempty"`
}

// TicketEventStatus reports how the sale stands.
type TicketEventStatus struct {
	// ObservedGeneration is the generation of the spec last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Progressing, Degraded, SalesOpen.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=te,categories=ticketfair
// +kubebuilder:printcolumn:name="Event",type=integer,JSONPath=`.spec.eventId`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TicketEvent is one concert sale: the operator provisions its queue, booking,
// relay and ticket services and reports the sale's progress.
type TicketEvent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TicketEventSpec   `json:"spec,omitempty"`
	Status TicketEventStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TicketEventList contains a list of TicketEvent.
type TicketEventList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TicketEvent `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TicketEvent{}, &TicketEventList{})
}
