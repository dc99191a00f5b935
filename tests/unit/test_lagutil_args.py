"""offctl.faces.stormui.args: storm-kafka-monitor's command line, as KafkaOffsetLagUtil reads it.

KOLU = apache/storm external/storm-kafka-monitor/src/main/java/org/apache/storm/kafka/monitor/KafkaOffsetLagUtil.java;
cli = apache/commons-cli src/main/java/org/apache/commons/cli/DefaultParser.java@cli-1.3.1. Each row's id names the
source it reflects.
"""

from __future__ import annotations

import pytest

from offctl.faces.stormui.args import LagQuery, LagUsage, java_split, parse_args

NEW = ["-t", "t1", "-g", "grp", "-b", "h1:9092"]
OLD_R = ["-o", "-t", "t1", "-z", "zk1:2181,", "-n", "/root/spout", "-r", "/brokers"]
OLD_PL = ["-o", "-t", "t1", "-z", "zk1:2181,", "-n", "/root/spout", "-p", "0,1,", "-l", "h1:9092,h2:9092,"]
REASON = "Unable to get offset lags for kafka. Reason: org.apache.commons.cli."


def new(**kw) -> LagQuery:
    base = dict(mode="new", topics_arg="t1", topics=("t1",), group="grp", bootstrap="h1:9092")
    return LagQuery(**{**base, **kw})


def old(**kw) -> LagQuery:
    base = dict(mode="old", topics_arg="t1", topics=("t1",), zk_servers="zk1:2181,", zk_node="/root/spout")
    return LagQuery(**{**base, **kw})


def usage(message: str) -> LagUsage:
    return LagUsage(message=message, exit_code=1, help=True)


def reason(rest: str) -> LagUsage:
    return LagUsage(message=REASON + rest, exit_code=0, help=False)


ACCEPTED = [
    # new-spout mode, as TopologySpoutLag passes it (TSL@v1.2.4/v2.8.8 getCommandLineOptionsForNewKafkaSpout)
    pytest.param(NEW, new(), id="new-spout-KOLU@v1.2.4:128-144,@v2.8.8:62-74"),
    pytest.param(NEW + ["-s", "SASL_SSL"], new(security_protocol="SASL_SSL"), id="new-s-KOLU@v1.2.4:129"),
    pytest.param(
        NEW + ["-c", "/tmp/kafka-consumer-extra1props"],
        new(consumer_config="/tmp/kafka-consumer-extra1props"),
        id="new-c-KOLU@v1.2.3:143",
    ),
    pytest.param(NEW + ["-m", "PLAIN"], new(sasl_mechanism="PLAIN"), id="new-m-KOLU@v2.8.8:66"),
    pytest.param(
        ["-t", "t1,t2,", "-g", "grp", "-b", "h1:9092"],
        new(topics_arg="t1,t2,", topics=("t1", "t2")),
        id="new-trailing-comma-String.split-KOLU@v1.2.4:231",
    ),
    pytest.param(
        ["-t", " t1, t2", "-g", "grp", "-b", "h1:9092"],
        new(topics_arg=" t1, t2", topics=(" t1", " t2")),
        id="new-topics-untrimmed-KOLU@v1.2.4:231",
    ),
    # long forms and commons-cli's token forms
    pytest.param(
        ["--topics", "t1", "--groupid", "grp", "--bootstrap-brokers", "h1:9092"], new(), id="long-KOLU-buildOptions"
    ),
    pytest.param(
        ["--topics=t1", "--groupid=grp", "--bootstrap-brokers=h1:9092"],
        new(),
        id="long-equals-cli:handleLongOptionWithEqual",
    ),
    pytest.param(
        ["--top", "t1", "--group", "grp", "--boot", "h1:9092"], new(), id="long-prefix-cli:Options.getMatchingOptions"
    ),
    pytest.param(["-tt1", "-ggrp", "-bh1:9092"], new(), id="short-glued-cli:handleConcatenatedOptions"),
    pytest.param(["-t=t1", "-g=grp", "-b=h1:9092"], new(), id="short-equals-cli:handleShortAndLongOption-S=V"),
    pytest.param(["-topics", "t1", "-groupid", "grp", "-b", "h1:9092"], new(), id="long-one-dash-cli:-L"),
    pytest.param(["-topicst1", "-g", "grp", "-b", "h1:9092"], new(), id="long-glued-cli:getLongPrefix-LV"),
    pytest.param(
        ["-t", '"t1"', "-g", "grp", "-b", "h1:9092"], new(), id="quotes-stripped-cli:Util.stripLeadingAndTrailingQuotes"
    ),
    pytest.param(["--topics", '"t1"', "-g", "grp", "-b", "h1:9092"], new(), id="quotes-stripped-long-cli"),
    pytest.param(
        ['--topics="t1"', "-g", "grp", "-b", "h1:9092"],
        new(topics_arg='"t1"', topics=('"t1"',)),
        id="quotes-kept-after-equals-cli:handleLongOptionWithEqual",
    ),
    pytest.param(
        ["-t", "-x", "-g", "grp", "-b", "h1:9092"],
        new(topics_arg="-x", topics=("-x",)),
        id="unknown-dash-token-is-a-value-cli:isArgument",
    ),
    pytest.param(
        ["-t", "-1", "-g", "grp", "-b", "h1:9092"],
        new(topics_arg="-1", topics=("-1",)),
        id="negative-number-is-a-value-cli:isNegativeNumber",
    ),
    pytest.param(NEW + ["stray"], new(), id="positional-ignored-cli:handleUnknownToken-addArg"),
    pytest.param(NEW + ["--", "-x"], new(), id="double-dash-stops-parsing-cli:handleToken"),
    pytest.param(
        ["-t", "t1", "-t", "t2", "-g", "grp", "-b", "h1:9092"],
        new(),
        id="repeated-first-wins-cli:CommandLine.getOptionValues",
    ),
    pytest.param(
        ["-t", "", "-g", "", "-b", ""],
        new(topics_arg="", topics=("",), group="", bootstrap=""),
        id="empty-values-present-KOLU:hasOption",
    ),
    # old-spout mode with ZkHosts (-r) and with StaticHosts (-p/-l), 1.x only
    pytest.param(OLD_R, old(zk_brokers_root="/brokers"), id="old-r-KOLU@v1.2.4:102-109"),
    pytest.param(OLD_R + ["-w"], old(zk_brokers_root="/brokers", wildcard=True), id="old-r-w-KOLU@v1.2.4:107-109"),
    pytest.param(
        ["-ow", "-t", "t.*", "-z", "zk:2181", "-n", "/n", "-r", "/brokers"],
        old(
            topics_arg="t.*",
            topics=("t.*",),
            zk_servers="zk:2181",
            zk_node="/n",
            zk_brokers_root="/brokers",
            wildcard=True,
        ),
        id="old-flags-glued-cli:handleConcatenatedOptions",
    ),
    pytest.param(
        OLD_PL,
        old(partitions=("0", "1"), leaders=("h1:9092", "h2:9092")),
        id="old-p-l-trailing-commas-KOLU@v1.2.4:118-125-TSL@v1.2.4",
    ),
    pytest.param(
        OLD_R + ["-c", "/tmp/x.props"],
        old(zk_brokers_root="/brokers", consumer_config="/tmp/x.props"),
        id="old-c-accepted-unused-KOLU@v1.2.3:87-127-TSL@v1.2.3-createExtraPropertiesFile",
    ),
    pytest.param(
        OLD_PL + ["-c", "/tmp/x.props"],
        old(partitions=("0", "1"), leaders=("h1:9092", "h2:9092"), consumer_config="/tmp/x.props"),
        id="old-p-l-c-KOLU@v1.2.3",
    ),
    pytest.param(
        ["-o", "-t", "t1,", "-z", "z", "-n", "/n", "-r", "/b"],
        old(topics_arg="t1,", zk_servers="z", zk_node="/n", zk_brokers_root="/b"),
        id="old-single-topic-trailing-comma-KOLU@v1.2.4:97-98",
    ),
    pytest.param(
        [
            "--old-spout",
            "--topics",
            "t1",
            "--zk-servers",
            "zk1:2181,",
            "--zk-node",
            "/root/spout",
            "--zk-brokers-root-node",
            "/brokers",
            "--wildcard-topic",
        ],
        old(zk_brokers_root="/brokers", wildcard=True),
        id="old-long-KOLU@v1.2.4:55-72",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-z", "z", "-n", "/n", "--partitions=0", "--leaders=h:1"],
        old(zk_servers="z", zk_node="/n", partitions=("0",), leaders=("h:1",)),
        id="old-p-l-long-equals",
    ),
]


@pytest.mark.parametrize("argv, want", ACCEPTED)
def test_accepted(argv, want):
    assert parse_args(argv) == want


REFUSED = [
    # checks: message + help, exit 1 (printUsageAndExit, KOLU all tags)
    pytest.param([], usage("topics is required"), id="no-args-KOLU@v1.2.4:84-86"),
    pytest.param(["-g", "grp", "-b", "h"], usage("topics is required"), id="no-t-KOLU@v2.8.8:62-64"),
    pytest.param(
        ["-t", "t1", "-b", "h"],
        usage("groupid and bootstrap-brokers are required if old-spout is not specified"),
        id="no-g-KOLU@v1.2.4:137-139",
    ),
    pytest.param(
        ["-t", "t1", "-g", "grp"],
        usage("groupid and bootstrap-brokers are required if old-spout is not specified"),
        id="no-b-KOLU@v1.2.4:137-139",
    ),
    pytest.param(
        ["-t", "t1", "-s", "SSL"],
        usage("groupid and bootstrap-brokers are required if old-spout is not specified"),
        id="no-g-no-b-KOLU@v1.2.4:137-139",
    ),
    pytest.param(
        NEW + ["-w"], usage("wildcard-topic is not accepted without old-spout"), id="new-w-KOLU@v1.2.4:130-135"
    ),
    pytest.param(
        NEW + ["-p", "0"], usage("partitions is not accepted without old-spout"), id="new-p-KOLU@v1.2.4:130-135"
    ),
    pytest.param(
        NEW + ["-l", "h:1"], usage("leaders is not accepted without old-spout"), id="new-l-KOLU@v1.2.4:130-135"
    ),
    pytest.param(
        NEW + ["-z", "z"], usage("zk-servers is not accepted without old-spout"), id="new-z-KOLU@v1.2.4:130-135"
    ),
    pytest.param(
        NEW + ["-n", "/n"], usage("zk-node is not accepted without old-spout"), id="new-n-KOLU@v1.2.4:130-135"
    ),
    pytest.param(
        NEW + ["-r", "/b"],
        usage("zk-brokers-root-node is not accepted without old-spout"),
        id="new-r-KOLU@v1.2.4:130-135",
    ),
    pytest.param(
        NEW + ["-r", "/b", "-l", "h:1", "-w"],
        usage("wildcard-topic is not accepted without old-spout"),
        id="new-first-in-order-reported-KOLU@v1.2.4:130-135",
    ),
    pytest.param(
        ["-t", "t1", "-r", "/b"],
        usage("zk-brokers-root-node is not accepted without old-spout"),
        id="new-old-option-before-missing-g-KOLU@v1.2.4:130-139",
    ),
    pytest.param(
        OLD_R + ["-g", "grp"],
        usage("groupid or bootstrap-brokers or security-protocol is not accepted with option old-spout"),
        id="old-g-KOLU@v1.2.4:89-92",
    ),
    pytest.param(
        OLD_R + ["-b", "h"],
        usage("groupid or bootstrap-brokers or security-protocol is not accepted with option old-spout"),
        id="old-b-KOLU@v1.2.4:89-92",
    ),
    pytest.param(
        OLD_R + ["-s", "SSL"],
        usage("groupid or bootstrap-brokers or security-protocol is not accepted with option old-spout"),
        id="old-s-KOLU@v1.2.4:89-92",
    ),
    pytest.param(
        OLD_R + ["-m", "PLAIN"],
        usage("sasl-mechanism is not accepted with option old-spout"),
        id="old-m-union-choice-no-m-in-1.x",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-n", "/n", "-r", "/b"],
        usage("zk-servers and zk-node are required  with old-spout"),
        id="old-no-z-KOLU@v1.2.4:93-96",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-z", "z", "-r", "/b"],
        usage("zk-servers and zk-node are required  with old-spout"),
        id="old-no-n-KOLU@v1.2.4:93-96",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-g", "g"],
        usage("groupid or bootstrap-brokers or security-protocol is not accepted with option old-spout"),
        id="old-g-before-missing-z-KOLU@v1.2.4:89-96",
    ),
    pytest.param(
        ["-o", "-t", "t1,t2", "-z", "z", "-n", "/n", "-r", "/b"],
        usage(
            "Multiple topics not supported with option old-spout. Either a single topic or a wildcard string "
            "for matching topics is supported"
        ),
        id="old-two-topics-KOLU@v1.2.4:97-101",
    ),
    pytest.param(
        ["-o", "-t", ",t1", "-z", "z", "-n", "/n", "-r", "/b"],
        usage(
            "Multiple topics not supported with option old-spout. Either a single topic or a wildcard string "
            "for matching topics is supported"
        ),
        id="old-leading-empty-topic-String.split-KOLU@v1.2.4:97",
    ),
    pytest.param(
        OLD_R + ["-p", "0"],
        usage("partitions or leaders is not accepted with zk-brokers-root-node"),
        id="old-r-p-KOLU@v1.2.4:102-106",
    ),
    pytest.param(
        OLD_R + ["-l", "h:1"],
        usage("partitions or leaders is not accepted with zk-brokers-root-node"),
        id="old-r-l-KOLU@v1.2.4:102-106",
    ),
    pytest.param(
        OLD_PL + ["-w"],
        usage("wildcard-topic is not supported without zk-brokers-root-node"),
        id="old-w-without-r-KOLU@v1.2.4:111-113",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-z", "z", "-n", "/n"],
        usage("partitions and leaders are required if zk-brokers-root-node is not provided"),
        id="old-no-r-no-p-l-KOLU@v1.2.4:114-117",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-z", "z", "-n", "/n", "-p", "0"],
        usage("partitions and leaders are required if zk-brokers-root-node is not provided"),
        id="old-p-without-l-KOLU@v1.2.4:114-117",
    ),
    pytest.param(
        ["-o", "-t", "t1", "-z", "z", "-n", "/n", "-p", "0,1,", "-l", "h:1,"],
        usage("partitions and leaders need to be of same size"),
        id="old-p-l-sizes-KOLU@v1.2.4:118-122",
    ),
    # parse errors: caught by main's catch (Exception), "Unable to get offset lags..." and exit 0 (KOLU@v1.2.4:148-151)
    *(
        pytest.param(NEW + [token], reason(f"UnrecognizedOptionException: Unrecognized option: {token}"), id=source)
        for token, source in (  # commons-cli names the token as it was given
            ("-x", "unknown-short-cli:handleUnknownToken"),
            ("--nope", "unknown-long-cli:handleLongOptionWithoutEqual"),
            ("--nope=1", "unknown-long-equals-cli:handleLongOptionWithEqual"),
            ("--old-spout=yes", "flag-with-value-cli:handleLongOptionWithEqual"),
            ("-o=1", "short-flag-with-value-cli:-S=V"),
            ("-ox", "concatenated-unknown-cli:handleConcatenatedOptions"),
        )
    ),
    pytest.param(
        ["-t"],
        reason("MissingArgumentException: Missing argument for option: t"),
        id="missing-arg-last-cli:checkRequiredArgs",
    ),
    pytest.param(
        ["--topics", "-g", "grp", "-b", "h"],
        reason("MissingArgumentException: Missing argument for option: t"),
        id="missing-arg-before-option-cli:handleOption",
    ),
    pytest.param(
        ["-t", "--groupid", "grp"],
        reason("MissingArgumentException: Missing argument for option: t"),
        id="missing-arg-before-long-cli:isLongOption",
    ),
    pytest.param(
        ["-t", "t1", "--zk", "z"],
        reason(
            "AmbiguousOptionException: Ambiguous option: '--zk'  (could be: 'zk-servers', 'zk-node', "
            "'zk-brokers-root-node')"
        ),
        id="ambiguous-prefix-cli:AmbiguousOptionException",
    ),
    pytest.param(
        ["-t", "t1", "--s", "x"],
        reason("AmbiguousOptionException: Ambiguous option: '--s'  (could be: 'security-protocol', 'sasl-mechanism')"),
        id="ambiguous-s-as-2.6+-KOLU@v2.8.8",
    ),
    pytest.param(
        ["-t", "t1", "--zk=z"],
        reason(
            "AmbiguousOptionException: Ambiguous option: '--zk'  (could be: 'zk-servers', 'zk-node', "
            "'zk-brokers-root-node')"
        ),
        id="ambiguous-equals-cli:handleLongOptionWithEqual",
    ),
    pytest.param(
        NEW + ["-=x"],
        LagUsage(
            message="Unable to get offset lags for kafka. Reason: "
            "java.lang.StringIndexOutOfBoundsException: begin 0, end 1, length 0",
            exit_code=0,
            help=False,
        ),
        id="dash-equals-cli:isJavaProperty-empty",
    ),
]


@pytest.mark.parametrize("argv, want", REFUSED)
def test_refused(argv, want):
    assert parse_args(argv) == want


@pytest.mark.parametrize(
    "text, want",
    [
        ("a", ("a",)),
        ("a,b", ("a", "b")),
        ("a,b,", ("a", "b")),
        ("a,,", ("a",)),
        (",a", ("", "a")),
        ("a,,b", ("a", "", "b")),
        (",", ()),
        (",,", ()),
        ("", ("",)),
    ],
    ids=repr,
)
def test_java_split(text, want):
    """java.lang.String#split(","), limit 0: trailing empty strings removed; "" splits to [""]."""
    assert java_split(text) == want


def test_results_are_frozen():
    q = parse_args(NEW)
    assert isinstance(q, LagQuery)
    with pytest.raises(AttributeError):
        q.group = "other"  # type: ignore[misc]


# --- the tokenizer against commons-cli itself -----------------------------------------------------------------

COMMONS_CLI = "/usr/share/java/commons-cli.jar"  # Debian's libcommons-cli-java (1.5.0 on bookworm)
HARNESS = r"""
import org.apache.commons.cli.*; import java.io.*;
public class Harness {
  public static void main(String[] a) throws Exception {
    String[][] o = {%s};
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    for (String line; (line = in.readLine()) != null; ) {
      String[] args = line.isEmpty() ? new String[0] : line.split("\u0001", -1);
      Options options = new Options();
      for (String[] x : o) options.addOption(x[0], x[1], x[2].equals("1"), "d");
      StringBuilder b = new StringBuilder();
      try {
        CommandLine cl = new DefaultParser().parse(options, args);
        for (String[] x : o) if (cl.hasOption(x[1]))
          b.append(x[1]).append("=").append(x[2].equals("1") ? cl.getOptionValue(x[1]) : "").append(";");
      } catch (Exception e) { b.append("ERR ").append(e.getClass().getName()).append(": ").append(e.getMessage()); }
      System.out.println(b);
    }
  }
}
"""
EXTRA_ARGV = [
    ["-top", "x"],
    ["-zk", "x"],
    ["-o", "-topics=x"],
    ["-tx", "-gy", "-bz", "-s"],
    ["--topics", "--", "x"],
    ["-", "-t", "x"],
    ["-t", "-o"],
    ["-t", "-zk"],
    ["-t", "--zk"],
    ["-t", "-topicsx"],
    ["-wo"],
    ["-tow"],
    ["-ot", "x"],
    ["--old"],
    ["--t", "x"],
    ["-t", '"a"b"'],
    ["-t", '"'],
    ["-t", "x", "-c"],
    ["-leadersh:1", "-t", "x"],
    ["-t=", "-g="],
    ["--topics="],
    ["-x=1"],
    ["---t", "x"],
]


def test_the_tokenizer_agrees_with_commons_cli(tmp_path):
    """Every command line of the tables above, and some stranger ones, through Debian's commons-cli DefaultParser
    with KOLU's options (the union): the same options and values, or the same exception and message."""
    import shutil
    import subprocess
    from pathlib import Path

    from offctl.faces.stormui import args as lagutil

    if shutil.which("javac") is None or not Path(COMMONS_CLI).exists():  # `java File.java` needs the JDK's compiler
        pytest.skip(f"needs a JDK (javac) and {COMMONS_CLI} (Debian's libcommons-cli-java)")
    options = ",".join(f'{{"{s}","{lng}","{int(arg)}"}}' for s, lng, arg in lagutil.OPTIONS)
    source = tmp_path / "Harness.java"
    source.write_text(HARNESS % options, encoding="utf-8")
    argvs = [p.values[0] for p in ACCEPTED + REFUSED] + EXTRA_ARGV

    def ours(argv):
        try:
            given = lagutil._Parser().parse(argv)
        except lagutil._ParseError as exc:
            return f"ERR {exc.java_class}: {exc.message}"
        return "".join(f"{lng}={given[lng][0] if arg else ''};" for _, lng, arg in lagutil.OPTIONS if lng in given)

    run = subprocess.run(
        ["java", "-cp", COMMONS_CLI, str(source)],
        input="".join("\x01".join(a) + "\n" for a in argvs),
        capture_output=True,
        text=True,
        timeout=300,
    )
    theirs = run.stdout.splitlines()
    assert len(theirs) == len(argvs), run.stderr
    assert [(a, ours(a)) for a in argvs] == list(zip(argvs, theirs))
