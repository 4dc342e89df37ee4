//! The receive side of the vector format (RECVs, RQ doorbells, the verbs
//! program, the per-QP responder fields): every bad value gets an error
//! naming the file, the field and the reason, never a panic; a vector
//! using them runs clean.

use std::path::Path;

use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::Vector;
use serde_json::{json, Value};

/// QP 0 (RC, an RQ of 4) and QP 1 (UC), one CQ, one MR, nothing to send.
fn base() -> Value {
    json!({
        "format": 1, "name": "resp_input", "description": "d", "checked_against": "c",
        "top": "rnic_top",
        "qps": [
            {"qp": 0, "type": "rc", "remote_qpn": 256, "psn": 100, "mtu": 1024, "cq": 0,
             "dst_mac": "02:00:00:00:01:00", "src_mac": "02:00:00:00:00:00",
             "ip": {"ipv4": {"src": "10.0.0.1", "dst": "10.0.1.1"}},
             "sq": {"base": "0x10000000", "log_size": 4},
             "epsn": 5, "rq": {"base": "0x30000000", "log_size": 2}, "rq_cq": 0,
             "min_rnr_timer": 12, "max_dest_rd_atomic": 4,
             "remote_access": ["remote_write", "remote_read"]},
            {"qp": 1, "type": "uc", "remote_qpn": 257, "mtu": 4096, "cq": 0,
             "dst_mac": "02:00:00:00:01:01", "src_mac": "02:00:00:00:00:01",
             "ip": {"ipv4": {"src": "10.0.0.2", "dst": "10.0.1.2"}},
             "sq": {"base": "0x10010000", "log_size": 4}}
        ],
        "cqs": [{"cq": 0, "ring": {"base": "0x20000000", "log_size": 6}}],
        "mrs": [{"index": 1, "key": "0x101", "va": "0x100000", "len": "0x100000",
                 "pbase": "0x100000", "access": ["local_write"]}],
        "max_cycles": 200000
    })
}

fn with(mut v: Value, path: &str, value: Value) -> Value {
    let mut at = &mut v;
    for k in path.split('.') {
        at = match k.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[k],
        };
    }
    *at = value;
    v
}

fn assert_error(v: &Value, field: &str, words: &str) {
    match Vector::parse(Path::new("v.json"), &v.to_string()) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.starts_with(&format!("v.json: {field}: ")) && e.contains(words),
                "expected `{field}: ...{words}...`, got `{e}`"
            );
        }
    }
}

fn recv(qp: u32, sges: usize) -> Value {
    let s: Vec<Value> = (0..sges)
        .map(
            |k| json!({"addr": format!("{:#x}", 0x100000 + 0x100 * k), "len": 64, "lkey": "0x101"}),
        )
        .collect();
    json!({"qp": qp, "wr_id": "0x77", "sges": s})
}

#[test]
fn responder_fields_that_do_not_fit_are_errors() {
    assert_error(
        &with(base(), "qps.0.epsn", json!(1 << 24)),
        "qps[0].epsn",
        "does not fit in 24 bits",
    );
    assert_error(
        &with(base(), "qps.0.rq.base", json!("0x30000040")),
        "qps[0].rq.base",
        "128-byte aligned",
    );
    assert_error(
        &with(base(), "qps.0.rq.log_size", json!(16)),
        "qps[0].rq.log_size",
        "not in 0..=15",
    );
    assert_error(
        &with(base(), "qps.0.rq_cq", json!(3)),
        "qps[0].rq_cq",
        "CQ 3 is not in cqs",
    );
    assert_error(
        &with(base(), "qps.0.min_rnr_timer", json!(32)),
        "qps[0].min_rnr_timer",
        "5 bits",
    );
    assert_error(
        &with(base(), "qps.0.max_dest_rd_atomic", json!(8)),
        "qps[0].max_dest_rd_atomic",
        "3 bits",
    );
    assert_error(
        &with(base(), "qps.0.remote_access", json!(["local_write"])),
        "qps[0].remote_access",
        "not a right a QP grants",
    );
    assert_error(
        &with(base(), "qps.0.state", json!("rtx")),
        "qps[0].state",
        "unknown variant",
    );
}

#[test]
fn recvs_and_their_posting_are_checked() {
    let v = with(base(), "recvs", json!([recv(1, 1)]));
    assert_error(&v, "recvs[0].qp", "QP 1 has no rq ring");
    let v = with(base(), "recvs", json!([recv(5, 1)]));
    assert_error(&v, "recvs[0].qp", "QP 5 is not in qps");
    let v = with(base(), "recvs", json!([recv(0, 5)]));
    assert_error(&v, "recvs[0].sges", "a RECV holds 0..=4");
    let mut r = recv(0, 2);
    r["num_sge"] = json!(1);
    let v = with(base(), "recvs", json!([r]));
    assert_error(&v, "recvs[0].num_sge", "below the number of sges");
    let mut r = recv(0, 1);
    r["sges"][0]["lkey"] = json!("0x100000000");
    let v = with(base(), "recvs", json!([r]));
    assert_error(&v, "recvs[0].sges[0].lkey", "32 bits");
    let v = with(base(), "recvs", json!([recv(0, 1)]));
    assert_error(&v, "recvs", "every RECV must be posted");
    let v = with(
        with(base(), "recvs", Value::Array(vec![recv(0, 1); 5])),
        "rq_doorbells",
        json!([{"qp": 0, "recvs": 5}]),
    );
    assert_error(&v, "rq_doorbells[0].recvs", "RQ ring holds 4 RECVs");
    let v = with(
        with(base(), "recvs", json!([recv(0, 1)])),
        "rq_doorbells",
        json!([{"qp": 0, "recvs": 2}]),
    );
    assert_error(&v, "rq_doorbells[0].recvs", "more RECVs than QP 0 has");
    let v = with(
        with(base(), "recvs", json!([recv(0, 1)])),
        "rq_doorbells",
        json!([{"at": 300000, "qp": 0, "recvs": 1}]),
    );
    assert_error(&v, "rq_doorbells[0].at", "past the run's limit");
}

#[test]
fn program_steps_are_checked() {
    let v = with(
        base(),
        "program",
        json!([{"wait_cqes": {"cq": 2, "count": 1}}]),
    );
    assert_error(&v, "program[0].wait_cqes.cq", "CQ 2 is not in cqs");
    let v = with(
        base(),
        "program",
        json!([{"wait_cqes": {"cq": 0, "count": 0}}]),
    );
    assert_error(&v, "program[0].wait_cqes.count", "a wait for nothing");
    let v = with(
        base(),
        "program",
        json!([{"wait_until": {"cycle": 300000}}]),
    );
    assert_error(&v, "program[0].wait_until.cycle", "past the run's limit");
    let v = with(
        base(),
        "program",
        json!([{"post_send": {"qp": 1, "wqes": 1}}]),
    );
    assert_error(&v, "doorbells", "every WQE must be posted");
    let v = with(
        base(),
        "program",
        json!([{"post_send": {"qp": 9, "wqes": 1}}]),
    );
    assert_error(&v, "program[0].post_send.qp", "QP 9 is not in qps");
    let v = with(
        base(),
        "program",
        json!([{"post_recv": {"qp": 0, "recvs": 1}}]),
    );
    assert_error(&v, "program[0].post_recv.recvs", "more RECVs than QP 0 has");
    let v = with(base(), "program", json!([{"sleep": 5}]));
    assert_error(&v, "program[0]", "unknown variant");
}

/// A program that posts RECVs (by a step and a timed RQ doorbell), sends
/// a UC SEND, waits for its completion and posts more RECVs runs clean on
/// the model: nothing arrives, so the responder does nothing, and the
/// RECVs stay posted.
#[test]
fn a_program_runs_to_its_end() {
    let mut v = with(base(), "recvs", json!([recv(0, 1), recv(0, 4), recv(0, 0)]));
    v = with(v, "rq_doorbells", json!([{"at": 10, "qp": 0, "recvs": 1}]));
    v = with(
        v,
        "wqes",
        json!([{"qp": 1, "opcode": "send", "wr_id": "0x9", "len": 100,
                "laddr": "0x100000", "lkey": "0x101"}]),
    );
    v = with(
        v,
        "program",
        json!([{"wait_until": {"cycle": 50}}, {"post_send": {"qp": 1, "wqes": 1}},
               {"wait_cqes": {"cq": 0, "count": 1}}, {"post_recv": {"qp": 0, "recvs": 2}}]),
    );
    let vec = Vector::parse(Path::new("v.json"), &v.to_string()).unwrap();
    let again = Vector::parse(Path::new("v.json"), &vec.to_json()).unwrap();
    assert_eq!(again, vec, "the new fields survive a round trip");
    let r = scenario::run(&vec, Mode::Model, &RunOpts::default()).expect("runs");
    assert!(
        r.clean(),
        "failures {:?}, completed {}",
        r.failures,
        r.completed
    );
    assert_eq!(r.cqes.len(), 1, "the SEND's completion");
}

/// The requester's retransmission fields (RETRY): out of range is an
/// error naming the field; in range they round-trip and the vector runs.
#[test]
fn retry_fields_are_checked() {
    assert_error(
        &with(base(), "qps.0.timeout", json!(32)),
        "qps[0].timeout",
        "5 bits",
    );
    assert_error(
        &with(base(), "qps.1.retry_cnt", json!(8)),
        "qps[1].retry_cnt",
        "3 bits",
    );
    assert_error(
        &with(base(), "qps.0.rnr_retry", json!(8)),
        "qps[0].rnr_retry",
        "3 bits",
    );
    let mut v = with(base(), "qps.0.timeout", json!(14));
    v = with(v, "qps.0.retry_cnt", json!(3));
    v = with(v, "qps.0.rnr_retry", json!(0));
    let vec = Vector::parse(Path::new("v.json"), &v.to_string()).unwrap();
    assert_eq!(
        (
            vec.qps[0].timeout,
            vec.qps[0].retry_cnt,
            vec.qps[0].rnr_retry
        ),
        (14, 3, 0)
    );
    assert_eq!(
        (
            vec.qps[1].timeout,
            vec.qps[1].retry_cnt,
            vec.qps[1].rnr_retry
        ),
        (0, 7, 7),
        "the defaults are RETRY's reset values"
    );
    let again = Vector::parse(Path::new("v.json"), &vec.to_json()).unwrap();
    assert_eq!(again, vec, "the fields survive a round trip");
    let r = scenario::run(&vec, Mode::Model, &RunOpts::default()).expect("runs");
    assert!(r.clean(), "failures {:?}", r.failures);
}
