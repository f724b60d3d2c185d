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

package localsvc

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// A 3-node KRaft cluster elects new partition leaders when a node is
// killed, and takes the node back after a restart.
func TestApacheKafkaClusterSurvivesAKilledNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k, err := StartApacheKafka(ctx, ApacheKafkaConfig{Nodes: 3, Topics: []string{"t"}})
	if errors.Is(err, ErrMissing) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	before, err := k.Leaders(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	victim := before[0]
	k.Kill(victim)
	deadline := time.Now().Add(30 * time.Second)
	for {
		after, err := k.Leaders(ctx, "t")
		if err == nil && after[0] != victim && after[0] >= 0 {
			t.Logf("partition 0 moved from node %d to node %d", victim+1, after[0]+1)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 0 still led by killed node %d: %v %v\n%s", victim+1, after, err, k.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := k.Restart(ctx, victim); err != nil {
		t.Fatal(err)
	}
	if !k.Running(victim) {
		t.Fatal("restarted node not running")
	}
}
