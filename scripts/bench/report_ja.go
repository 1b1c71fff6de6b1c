package bench

import (
	"regexp"
	"strings"
)

// Japanese renders a table page of the report (Markdown, LargeMarkdown,
// GangMarkdown, PreemptionMarkdown, SummaryMarkdown) for the Japanese
// posts: the same run, the same numbers and rows, the sentences and
// column names in Japanese (docs/ja/terms.md). It translates what those
// functions write, so that a number reaches both languages from one
// place; a sentence it does not know stays English, and
// TestJapaneseLeavesNoEnglish says so.
func Japanese(md string) string {
	for _, t := range jaSentences {
		md = t.re.ReplaceAllString(md, t.ja)
	}
	var out []string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") && strings.HasSuffix(line, "|") {
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i, c := range cells {
				c = strings.TrimSpace(c)
				if t, ok := jaCells[c]; ok {
					c = t
				}
				c = jaDoneRe.ReplaceAllString(c, "${1}${3}秒で${2}個")
				c = jaNodesRe.ReplaceAllString(c, "${1}ノード")
				c = jaUnboundRe.ReplaceAllString(c, "（${1}個がバインドされず）")
				cells[i] = " " + c + " "
			}
			line = "|" + strings.Join(cells, "|") + "|"
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

type jaSentence struct {
	re *regexp.Regexp
	ja string
}

func ja(pattern, repl string) jaSentence { return jaSentence{regexp.MustCompile(pattern), repl} }

// jaSentences are the report's sentences, in the order they are tried.
var jaSentences = []jaSentence{
	ja(`(?m)^Measured (.+?) on (.+?), in the same \x60make bench\x60 run as every other benchmark table\. Median of (\d+) runs\.$`,
		"${1}に${2}で、ほかのすべてのベンチマークの表と同じ`make bench`の実行で測定しました。${3}回の実行の中央値です。"),
	ja(`(?m)^Measured (.+?) on (.+?)\. Median of (\d+) runs\.$`,
		"${1}に${2}で測定しました。${3}回の実行の中央値です。"),
	ja(`\(resumed ([^)]*)\)`, "（${1}に再開）"),
	ja(`(?m)^\*\*SchedulingBasic at (\d+) nodes\*\*: (\d+) init pods, (\d+) measured pods; every client at (\S+) requests/s, burst (\d+); cap (\S+)\.$`,
		"**SchedulingBasic（${1}ノード）**: 事前に配置するPodが${2}個、測定するPodが${3}個です。どのクライアントも毎秒${4}リクエスト、バースト${5}で、上限は${6}です。"),
	ja(`(?m)^\*\*SchedulingBasic\*\*: (\d+) nodes, (\d+) init pods, (\d+) measured pods; every client at (\S+) requests/s, burst (\d+); cap (\S+)\.$`,
		"**SchedulingBasic**: ノードが${1}個、事前に配置するPodが${2}個、測定するPodが${3}個です。どのクライアントも毎秒${4}リクエスト、バースト${5}で、上限は${6}です。"),
	ja(`(?m)^!\[Average throughput of each scheduler, pods/s\]`, "![各スケジューラーの平均スループット（Pod/秒）]"),
	ja(`(?m)^\*\*Requeue\*\*: (\d+) pods wait for a label no node has among (\d+) nodes; (\d+) rounds, (\S+) apart, change a label they do not care about on every node and add a node without theirs; then a node with room for all of them is added, and labelled\. Wasted attempts are those beyond two per pod \(one finds no node, one binds\)\.$`,
		"**再キュー**: ${1}個のPodが、${2}個のノードのどれにもないラベルを待ちます。${4}おきに${3}回、すべてのノードでPodに関係のないラベルを変え、そのラベルのないノードを1つ加えます。その後、全Podが入るノードを加え、ラベルを付けます。無駄な試行は、Podあたり2回（ノードが見つからない1回と、バインドする1回）を超えた分です。"),
	ja(`(?m)^\*\*GangScheduling\*\*: (\d+) nodes; (\d+) PodGroups with `+"`minCount: (\\d+)`"+`, created first, then their (\d+) pods of 100m, every pod measured; cap (\S+)\.$`,
		"**GangScheduling**: ノードが${1}個です。`minCount: ${3}`のPodGroupを${2}個先に作り、続いてそのPod（CPU `100m`）を${4}個作って、すべてのPodを測定します。上限は${5}です。"),
	ja(`(?m)^\*\*PreemptionBasic\*\*: (\d+) nodes of 4 CPUs, each with four low-priority pods of 900m; (\d+) measured pods of priority 9999999 asking for 3970m, each of which must preempt all four; cap (\S+)\.$`,
		"**PreemptionBasic**: 4CPUのノードが${1}個あり、それぞれにCPU `900m`の優先度の低いPodが4個あります。優先度9999999でCPU `3970m`を要求するPodを${2}個測定し、どのPodも4個すべてをプリエンプトしなければなりません。上限は${3}です。"),
	ja(`(?m)^\*\*PreemptionAsync\*\*: (\d+) such nodes with their low-priority pods; (\d+) measured pods of 100m, while a preemptor of priority 9999999 asking for 3970m arrives every (\S+) \(no more in all than there are nodes\) and preempts a node's pods; cap (\S+)\.$`,
		"**PreemptionAsync**: 同じノードが優先度の低いPodとともに${1}個あります。CPU `100m`のPodを${2}個測定するあいだ、優先度9999999でCPU `3970m`を要求するプリエンプターが${3}ごとに来て（合計でノードの数まで）、ノードのPodをプリエンプトします。上限は${4}です。"),
	ja(`(?m)^\*\*Targets?\*\* \(on the medians, reported, never asserted\):$`, "**目標**（中央値に対して。報告するだけで、テストの合否にはしません）:"),
	ja(`(?m)^\*\*Targets\*\* \(on the medians\):$`, "**目標**（中央値に対して）:"),
	ja(`(?m)^SchedulingBasic, average pods/s, median of (\d+) runs, measured (.+?) on (.+?) \(\[all the tables\]\(([^)]*)\)\):$`,
		"SchedulingBasicの平均スループット（Pod/秒）、${1}回の実行の中央値です。${2}に${3}で測定しました（[すべての表](${4})）。"),
	ja(` SchedulingBasic at (\d+) nodes ≥ `, " SchedulingBasic（${1}ノード） ≥ "),
	ja(` wasted attempts ≤ (\S+)'s `, " の無駄な試行 ≤ ${1} "),
	ja(` wasted attempts ≥ 5× fewer than (\S+)'s `, " の無駄な試行 ≤ ${1}の5分の1 "),
	ja(`; (\d+\.\d+) vs (\d+\.\d+) CPU ms per pod\)`, "。PodあたりのCPU時間は${1} vs ${2}ミリ秒)"),
	ja(`; most of its runs did not finish\)`, "。大半の回が上限時間内に終わりませんでした)"),
	ja(` \(most of its runs did not finish\)`, " (大半の回が上限時間内に終わりませんでした)"),
	ja(`pods/s`, "Pod/秒"),
	ja(`wasted, × `, "無駄な試行、×"),
}

// jaCells are the tables' fixed cells: column names and answers.
var jaCells = map[string]string{
	"scheduler":                 "スケジューラー",
	"average Pod/秒":             "平均Pod/秒",
	"overall":                   "全体",
	"measured pods scheduled":   "スケジュールされた測定Pod",
	"pods scheduled":            "スケジュールされたPod",
	"peak RSS":                  "最大RSS",
	"CPU ms per pod":            "PodあたりのCPUミリ秒",
	"CPU s":                     "CPU秒",
	"× bind ceiling":            "×バインドの上限",
	"attempts":                  "試行",
	"attempts per pod":          "Podあたりの試行",
	"wasted":                    "無駄な試行",
	"bound":                     "バインド済み",
	"preemptors/victims":        "プリエンプター/退避対象のPod",
	"created→nominated ms":      "作成→指名（ミリ秒）",
	"nominated→victims gone ms": "指名→退避対象のPodの削除（ミリ秒）",
	"victims gone→bound ms":     "退避対象のPodの削除→バインド（ミリ秒）",
	"target":                    "目標",
	"measured":                  "測定値",
	"met":                       "達成",
	"yes":                       "はい",
	"no":                        "いいえ",
	"bind ceiling":              "バインドの上限",
	"not measured":              "測定なし",
}

var (
	jaDoneRe    = regexp.MustCompile(`^(DNF: )?(\d+) in ([\d.]+) s$`)
	jaNodesRe   = regexp.MustCompile(`^(\d+) nodes$`)
	jaUnboundRe = regexp.MustCompile(` \((\d+) unbound\)`)
)
