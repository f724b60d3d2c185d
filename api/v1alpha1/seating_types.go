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

// Seating is the event's places, in one of three forms:
//
//   - the shorthand: sections of rows of equal length at one price
//     (sections[] with price, rows and seatsPerRow, no categories);
//   - the venue model: price categories that span sections, seated
//     sections of rows (each with its own length, numbering, gaps and
//     attributes) and standing areas sold by count (categories and
//     sections[] with kind, category, capacity, seatRows);
//   - venueFrom: a ConfigMap key holding the venue model as JSON, for
//     venues too large to write inline.
//
// A spec with categories uses the venue model; without, the shorthand.
// +kubebuilder:validation:XValidation:rule="has(self.sections) != has(self.venueFrom)",message="seating needs exactly one of seating.sections and seating.venueFrom"
// +kubebuilder:validation:XValidation:rule="!has(self.venueFrom) || !has(self.categories)",message="seating.categories belong in the venue of seating.venueFrom, not beside it",fieldPath=".categories",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="has(self.categories) || !has(self.sections) || self.sections.all(s, has(s.price) && has(s.rows) && has(s.seatsPerRow))",message="seating.sections[] need price, rows and seatsPerRow (the shorthand), or seating.categories and a category each (the venue model)",fieldPath=".sections",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.categories) || !has(self.sections) || self.sections.all(s, !has(s.kind) && !has(s.category) && !has(s.rank) && !has(s.capacity) && !has(s.seatRows) && !has(s.mapX) && !has(s.mapY))",message="seating.sections[].kind, category, rank, capacity, seatRows, mapX and mapY are the venue model's: they need seating.categories",fieldPath=".sections",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.categories) || !has(self.sections) || self.sections.all(s, !has(s.price))",message="seating.sections[].price is the shorthand's: with seating.categories a section's places take the price of their category",fieldPath=".sections",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.categories) || !has(self.sections) || self.sections.all(s, !has(s.category) || self.categories.exists(c, c.name == s.category))",message="seating.sections[].category must name one of seating.categories",fieldPath=".sections",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.categories) || !has(self.sections) || self.sections.all(s, !has(s.seatRows) || s.seatRows.all(r, !has(r.category) || self.categories.exists(c, c.name == r.category)))",message="seating.sections[].seatRows[].category must name one of seating.categories",fieldPath=".sections",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.categories) || !has(self.sections) || self.sections.all(s, has(s.category) || (has(s.seatRows) && s.seatRows.all(r, has(r.category))))",message="seating.sections[].category is required, unless each of the section's seatRows names its category",fieldPath=".sections",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.sections) || self.sections.map(s, (has(s.capacity) ? s.capacity : 0) + (has(s.rows) && has(s.seatsPerRow) ? s.rows * s.seatsPerRow : 0) + (has(s.seatRows) ? s.seatRows.map(r, r.seats - (has(r.blocked) ? size(r.blocked) : 0)).sum() : 0)).sum() <= 2000000",message="seating.sections must hold at most 2000000 places: seats not blocked, plus the standing capacity",fieldPath=".sections",reason=FieldValueInvalid
type Seating struct {
	// Categories are the price categories of the venue model, best first
	// (1 to 32); every seat and standing place is in one, by its row's
	// category, else its section's. Without categories, sections are the
	// shorthand.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Categories []PriceCategory `json:"categories,omitempty"`

	// Sections of the venue; seat ids are "<section>-<row>-<seat>". 1 to
	// 100 sections. Required unless venueFrom is set.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	// +optional
	Sections []Section `json:"sections,omitempty"`

	// VenueFrom names a ConfigMap key holding the venue model as JSON
	// ({categories, sections: [{name, kind, category, rank, capacity,
	// rows: [{name, seats, numbering, first, gaps, category, blocked,
	// wheelchair, companion, restrictedView, aisle, x, y, dx, dy}], x,
	// y}]}, kind and numbering lower-case: seated, standing; ltr, rtl,
	// odd, even), instead of sections. The key is mounted read-only into
	// the migration Job and the booking pods, which validate it. The
	// ConfigMap must not change once the sale started: seating is
	// immutable, and the operator does not read it (status.seatsTotal
	// stays 0).
	// +optional
	VenueFrom *VenueSource `json:"venueFrom,omitempty"`
}

// PriceCategory is a price category, e.g. "1" at 89.50.
type PriceCategory struct {
	// Name of the category: 1 to 16 letters or digits.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]{1,16}$`
	// +kubebuilder:validation:MaxLength=16
	Name string `json:"name"`
	// Price of one place as a decimal string, e.g. "89.50".
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}(\.[0-9]{1,2})?$`
	Price string `json:"price"`
}

// VenueSource is where a venue model comes from.
type VenueSource struct {
	// ConfigMapKeyRef selects the key of a ConfigMap in the TicketEvent's
	// namespace.
	ConfigMapKeyRef ConfigMapKey `json:"configMapKeyRef"`
}

// ConfigMapKey selects a key of a ConfigMap.
type ConfigMapKey struct {
	// Name of the ConfigMap, at most 253 characters.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key of the venue's JSON in the ConfigMap, at most 253 characters.
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// SectionKind is Seated or Standing.
// +kubebuilder:validation:Enum=Seated;Standing
type SectionKind string

// Section kinds.
const (
	// SectionSeated is a block of rows of seats (the default).
	SectionSeated SectionKind = "Seated"
	// SectionStanding is a standing area, sold by count up to its capacity.
	SectionStanding SectionKind = "Standing"
)

// Section is a block of seats, or (venue model) a standing area.
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || self.kind != 'Standing' || has(self.capacity)",message="seating.sections[].capacity is required for a standing section",fieldPath=".capacity",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || (has(self.kind) && self.kind == 'Standing')",message="seating.sections[].capacity is only for a standing section (kind Standing)",fieldPath=".capacity",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || self.kind != 'Standing' || (!has(self.seatRows) && !has(self.rows) && !has(self.seatsPerRow))",message="seating.sections[] of kind Standing have a capacity, not seatRows, rows or seatsPerRow",fieldPath=".kind",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="(has(self.kind) && self.kind == 'Standing') || has(self.seatRows) || has(self.rows)",message="seating.sections[] of kind Seated need seatRows (or rows and seatsPerRow)",fieldPath=".seatRows",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.rows) == has(self.seatsPerRow)",message="seating.sections[].rows and seatsPerRow go together: rows rows of seatsPerRow seats",fieldPath=".seatsPerRow",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.seatRows) || !has(self.rows)",message="seating.sections[].seatRows and rows give a section's rows two ways: use one",fieldPath=".seatRows",reason=FieldValueForbidden
type Section struct {
	// Name of the section, used as the prefix of its seat ids: 1 to 16
	// letters or digits.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]{1,16}$`
	// +kubebuilder:validation:MaxLength=16
	Name string `json:"name"`
	// Price of one seat as a decimal string, e.g. "89.50" (the shorthand;
	// in the venue model the category has the price).
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}(\.[0-9]{1,2})?$`
	// +optional
	Price string `json:"price,omitempty"`
	// Rows in the section, 1 to 1000, of seatsPerRow seats each, named and
	// numbered from 1 (the shorthand; the venue model also takes it for a
	// section of equal rows).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Rows int32 `json:"rows,omitempty"`
	// SeatsPerRow is the number of seats in each row; 1 to 1000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	SeatsPerRow int32 `json:"seatsPerRow,omitempty"`

	// Kind is Seated (the default) or Standing (venue model).
	// +optional
	Kind SectionKind `json:"kind,omitempty"`
	// Category of the section's places, one of seating.categories: 1 to
	// 16 letters or digits (a row may name its own). Required for a
	// standing section.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]{1,16}$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Category string `json:"category,omitempty"`
	// Rank orders the sections for best available: lower is better, for
	// example the distance to the stage; 0 to 100000, default 0. Within
	// a seated section the front row comes first.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Rank int32 `json:"rank,omitempty"`
	// Capacity of a standing section: the places sold by count, 1 to
	// 100000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Capacity int32 `json:"capacity,omitempty"`
	// SeatRows are the rows of a seated section, front first, each with
	// its own length, numbering and attributes: 1 to 100 rows (a longer
	// section: rows and seatsPerRow, or venueFrom).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	// +optional
	SeatRows []SeatRow `json:"seatRows,omitempty"`
	// MapX, MapY place the section on the drawn seat map, in map units
	// (a standing area's centre; a seated section's origin, which its
	// rows' coordinates are relative to); -100000 to 100000. Without them
	// the map draws one line per row. (Not x and y: YAML reads a bare y as
	// true.)
	// +kubebuilder:validation:Minimum=-100000
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MapX *int32 `json:"mapX,omitempty"`
	// MapY: see mapX; -100000 to 100000.
	// +kubebuilder:validation:Minimum=-100000
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MapY *int32 `json:"mapY,omitempty"`
}

// SeatNumbering is how a row's seats are numbered, seen from the
// stage-facing side, left to right.
// +kubebuilder:validation:Enum=LeftToRight;RightToLeft;Odd;Even
type SeatNumbering string

// Seat numberings.
const (
	// NumberLeftToRight numbers first, first+1, ... (the default).
	NumberLeftToRight SeatNumbering = "LeftToRight"
	// NumberRightToLeft numbers ..., first+1, first.
	NumberRightToLeft SeatNumbering = "RightToLeft"
	// NumberOdd numbers first, first+2, ... with first odd.
	NumberOdd SeatNumbering = "Odd"
	// NumberEven numbers first, first+2, ... with first even.
	NumberEven SeatNumbering = "Even"
)

// SeatRow is one row of a seated section. Its seat attributes are lists
// of seat numbers as printed, each a seat of the row.
// +kubebuilder:validation:XValidation:rule="!has(self.first) || !has(self.numbering) || self.numbering != 'Odd' || self.first % 2 == 1",message="seating.sections[].seatRows[].first must be odd for numbering Odd",fieldPath=".first",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.first) || !has(self.numbering) || self.numbering != 'Even' || self.first % 2 == 0",message="seating.sections[].seatRows[].first must be even for numbering Even",fieldPath=".first",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.gaps) || self.gaps.all(g, g < self.seats)",message="seating.sections[].seatRows[].gaps must be positions 1 to seats-1, after which the row breaks",fieldPath=".gaps",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.blocked) || (self.blocked.min() >= (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) && self.blocked.max() < (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) * self.seats && (!has(self.numbering) || self.numbering == 'LeftToRight' || self.numbering == 'RightToLeft' || self.blocked.all(n, n % 2 == (self.numbering == 'Odd' ? 1 : 0))))",message="seating.sections[].seatRows[].blocked must be seat numbers of the row, as first and numbering number its seats",fieldPath=".blocked",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.wheelchair) || (self.wheelchair.min() >= (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) && self.wheelchair.max() < (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) * self.seats && (!has(self.numbering) || self.numbering == 'LeftToRight' || self.numbering == 'RightToLeft' || self.wheelchair.all(n, n % 2 == (self.numbering == 'Odd' ? 1 : 0))))",message="seating.sections[].seatRows[].wheelchair must be seat numbers of the row, as first and numbering number its seats",fieldPath=".wheelchair",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.companion) || (self.companion.min() >= (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) && self.companion.max() < (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) * self.seats && (!has(self.numbering) || self.numbering == 'LeftToRight' || self.numbering == 'RightToLeft' || self.companion.all(n, n % 2 == (self.numbering == 'Odd' ? 1 : 0))))",message="seating.sections[].seatRows[].companion must be seat numbers of the row, as first and numbering number its seats",fieldPath=".companion",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.restrictedView) || (self.restrictedView.min() >= (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) && self.restrictedView.max() < (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) * self.seats && (!has(self.numbering) || self.numbering == 'LeftToRight' || self.numbering == 'RightToLeft' || self.restrictedView.all(n, n % 2 == (self.numbering == 'Odd' ? 1 : 0))))",message="seating.sections[].seatRows[].restrictedView must be seat numbers of the row, as first and numbering number its seats",fieldPath=".restrictedView",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.aisle) || (self.aisle.min() >= (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) && self.aisle.max() < (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) * self.seats && (!has(self.numbering) || self.numbering == 'LeftToRight' || self.numbering == 'RightToLeft' || self.aisle.all(n, n % 2 == (self.numbering == 'Odd' ? 1 : 0))))",message="seating.sections[].seatRows[].aisle must be seat numbers of the row, as first and numbering number its seats",fieldPath=".aisle",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.companion) || (has(self.wheelchair) && self.companion.all(c, ((c + (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1)) in self.wheelchair && !(has(self.gaps) && ((has(self.numbering) && self.numbering == 'RightToLeft') ? (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + self.seats - (c) - 1 : ((c) - (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1))) / (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) + 1) in self.gaps)) || ((c - (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1)) in self.wheelchair && !(has(self.gaps) && ((has(self.numbering) && self.numbering == 'RightToLeft') ? (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1)) + self.seats - (c - (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1)) - 1 : ((c - (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1)) - (has(self.first) ? self.first : (has(self.numbering) && self.numbering == 'Even' ? 2 : 1))) / (has(self.numbering) && (self.numbering == 'Odd' || self.numbering == 'Even') ? 2 : 1) + 1) in self.gaps))))",message="seating.sections[].seatRows[].companion seats must be next to a wheelchair place of the row, not across a gap",fieldPath=".companion",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.blocked) || ((!has(self.wheelchair) || !self.wheelchair.exists(n, n in self.blocked)) && (!has(self.companion) || !self.companion.exists(n, n in self.blocked)))",message="seating.sections[].seatRows[].blocked seats cannot be wheelchair or companion places",fieldPath=".blocked",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.wheelchair) || !has(self.companion) || !self.companion.exists(n, n in self.wheelchair)",message="seating.sections[].seatRows[].companion seats cannot also be wheelchair places",fieldPath=".companion",reason=FieldValueInvalid
type SeatRow struct {
	// Name of the row as printed on the ticket: 1 to 8 letters or digits.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]{1,8}$`
	// +kubebuilder:validation:MaxLength=8
	Name string `json:"name"`
	// Seats in the row, counted from its left end; 1 to 1000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Seats int32 `json:"seats"`
	// Numbering is LeftToRight (the default), RightToLeft, Odd or Even.
	// +optional
	Numbering SeatNumbering `json:"numbering,omitempty"`
	// First is the first seat number, 1 to 100000 (default 1; 2 for Even).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	First int32 `json:"first,omitempty"`
	// Gaps are positions (1 to seats-1, from the left) after which the row
	// is broken, by an aisle or a pillar: the seats on either side are not
	// next to each other. At most 8.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Minimum=1
	// +listType=set
	// +optional
	Gaps []int32 `json:"gaps,omitempty"`
	// Category of the row's places, one of seating.categories: 1 to 16
	// letters or digits (default: the section's).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]{1,16}$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Category string `json:"category,omitempty"`
	// Blocked seats are not sold: a mixing desk, a camera. At most 32.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Blocked []int32 `json:"blocked,omitempty"`
	// Wheelchair places. At most 8.
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +optional
	Wheelchair []int32 `json:"wheelchair,omitempty"`
	// Companion seats, each next to a wheelchair place. At most 8.
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +optional
	Companion []int32 `json:"companion,omitempty"`
	// RestrictedView seats are sold, marked as such. At most 32.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	RestrictedView []int32 `json:"restrictedView,omitempty"`
	// Aisle seats are on an aisle. At most 16.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Aisle []int32 `json:"aisle,omitempty"`
	// MapX, MapY of the row's leftmost seat, relative to its section, in
	// map units; MapDX, MapDY the step from one seat to the next. -100000
	// to 100000.
	// +kubebuilder:validation:Minimum=-100000
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MapX *int32 `json:"mapX,omitempty"`
	// MapY: see mapX; -100000 to 100000.
	// +kubebuilder:validation:Minimum=-100000
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MapY *int32 `json:"mapY,omitempty"`
	// MapDX is the horizontal step from one seat to the next; -100000 to 100000.
	// +kubebuilder:validation:Minimum=-100000
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MapDX *int32 `json:"mapDX,omitempty"`
	// MapDY is the vertical step from one seat to the next; -100000 to 100000.
	// +kubebuilder:validation:Minimum=-100000
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MapDY *int32 `json:"mapDY,omitempty"`
}
