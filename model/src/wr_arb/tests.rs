//! Literal cases of `wr_arb`: latency, data steered by the request order.

use super::*;

fn beat(x: u8) -> Beat {
    Beat([x; 64])
}

/// A request at 0 is offered at 1 and taken; its beat is taken from the
/// client at 2 and offered to dma_wr at 3.
#[test]
fn request_then_its_beat_with_fixed_latency() {
    let mut d = WrArb::new();
    let o = d.reset();
    assert!(o.a_req_ready && !o.a_data_ready, "no data before a request");
    let i = WrArbIn {
        a_req_valid: true,
        a_req_addr: 0x1000,
        a_req_len: 10,
        a_data_valid: true,
        a_data: beat(7),
        wr_req_ready: true,
        wr_data_ready: true,
        ..Default::default()
    };
    let o = d.tick(&i); // cycle 0
    assert!(o.wr_req_valid && !o.wr_req_client);
    assert_eq!((o.wr_req_addr, o.wr_req_len), (0x1000, 10));
    assert!(!o.a_data_ready);
    let i = WrArbIn {
        a_req_valid: false,
        ..i
    };
    let o = d.tick(&i); // cycle 1: taken by dma_wr
    assert!(o.a_data_ready && !o.b_data_ready);
    let o = d.tick(&i); // cycle 2: the beat passes
    assert!(o.wr_data_valid && o.wr_data == beat(7));
    assert!(!o.a_data_ready, "one beat for 10 bytes");
}

/// a's 2-beat request is taken before b's; b's beat waits until both of
/// a's beats passed, whatever b offers meanwhile.
#[test]
fn beats_follow_the_request_order() {
    let mut d = WrArb::new();
    d.reset();
    let both = WrArbIn {
        a_req_valid: true,
        a_req_addr: 0xA,
        a_req_len: 100,
        b_req_valid: true,
        b_req_addr: 0xB,
        b_req_len: 1,
        wr_req_ready: true,
        wr_data_ready: true,
        ..Default::default()
    };
    let mut o = d.tick(&both);
    let mut clients = Vec::new();
    let mut data = Vec::new();
    let (mut a_beats, mut b_beats) = (0, 0);
    for _ in 0..12 {
        if o.wr_req_valid {
            clients.push(o.wr_req_client);
        }
        if o.wr_data_valid {
            data.push(o.wr_data);
        }
        let i = WrArbIn {
            a_req_valid: false,
            b_req_valid: false,
            a_data_valid: a_beats < 2,
            a_data: beat(0xA0 + a_beats),
            b_data_valid: b_beats < 1,
            b_data: beat(0xB0),
            ..both
        };
        a_beats += (i.a_data_valid && o.a_data_ready) as u8;
        b_beats += (i.b_data_valid && o.b_data_ready) as u8;
        o = d.tick(&i);
    }
    assert_eq!(clients, vec![false, true]);
    assert_eq!(data, vec![beat(0xA0), beat(0xA1), beat(0xB0)]);
}
