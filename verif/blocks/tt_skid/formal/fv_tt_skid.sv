`default_nettype none
// fv_tt_skid: the properties of rtl/tt_skid.v, a wrapper that instantiates it (top of tt_skid.sby).
//
// The solver drives in_valid, in_data, out_ready and rst freely every cycle: no producer or consumer
// discipline is assumed, so the proofs hold under any valid/ready pattern. The wrapper counts the words
// accepted and delivered (no word invented or duplicated, none lost) and follows one input word of the
// solver's choosing, a tagged word, through the buffer (it leaves at its own position in the stream with its
// own value: order and data kept). Any word can be the tagged one, so this covers every word.
module fv_tt_skid #(
  parameter integer WIDTH = 4
) (
  input wire             clk,
  input wire             rst,
  input wire             in_valid,
  input wire [WIDTH-1:0] in_data,
  input wire             out_ready,
  input wire             tag_now  // free: the solver picks which accepted word is tagged
);

  wire             in_ready;
  wire             out_valid;
  wire [WIDTH-1:0] out_data;

  tt_skid #(.WIDTH(WIDTH)) dut (
    .clk(clk), .rst(rst),
    .in_valid(in_valid), .in_ready(in_ready), .in_data(in_data),
    .out_valid(out_valid), .out_ready(out_ready), .out_data(out_data)
  );

  // The buffer's registers, connected by tt_skid.sby's script (`connect -set`: open yosys has no hierarchical
  // references). k-induction needs them: the word in the skid register is invisible at the ports until the
  // consumer takes the one ahead of it, which a stalled consumer can postpone for any number of cycles.
  (* keep *) wire             dut_out_valid_q;
  (* keep *) wire             dut_skid_valid_q;
  (* keep *) wire [WIDTH-1:0] dut_skid_q;

  // The first cycle is a reset; after that rst is free like every other input.
  reg init = 1'b1;
  always @(posedge clk) init <= 1'b0;
  always @(*) if (init) assume (rst);

  wire in_fire  = in_valid && in_ready;
  wire out_fire = out_valid && out_ready;

  // Words accepted and delivered since the last reset, modulo 16; their difference is the words held.
  reg  [3:0] in_cnt;
  reg  [3:0] out_cnt;
  wire [3:0] held = in_cnt - out_cnt;
  always @(posedge clk) begin
    if (rst) begin
      in_cnt  <= 4'd0;
      out_cnt <= 4'd0;
    end else begin
      in_cnt  <= in_cnt + {3'd0, in_fire};
      out_cnt <= out_cnt + {3'd0, out_fire};
    end
  end

  // The tagged word: its position in the input stream and its value, until it leaves.
  reg             tagged;    // a word has been tagged since the last reset
  reg             tag_gone;  // the tagged word has been delivered
  reg [3:0]       tag_idx;
  reg [WIDTH-1:0] tag_data;
  reg             tag_was_skid;  // the tagged word waited in the skid register (the full path)
  wire            tag_inside = tagged && !tag_gone;
  wire [3:0]      tag_ahead  = tag_idx - out_cnt;  // words to deliver before it
  always @(posedge clk) begin
    if (rst) begin
      tagged       <= 1'b0;
      tag_gone     <= 1'b0;
      tag_was_skid <= 1'b0;
    end else begin
      if (in_fire && tag_now && !tagged) begin
        tagged   <= 1'b1;
        tag_idx  <= in_cnt;
        tag_data <= in_data;
      end
      if (out_fire && tag_inside && tag_ahead == 4'd0) begin
        tag_gone <= 1'b1;
      end
      if (tag_inside && tag_ahead == 4'd1) begin
        tag_was_skid <= 1'b1;
      end
    end
  end

  // ---- the contract ----
  always @(*) begin
    if (!init) begin
      // Never more words out than in, and never more held than the two registers: nothing invented or duplicated.
      a_no_duplicate: assert (held <= 4'd2);
      // Every word held is offered: out_valid whenever a word is inside, so none is lost or stuck.
      a_no_loss: assert (out_valid == (held != 4'd0));
      // in_ready exactly while there is room: it backpressures only when both registers hold a word.
      a_ready_iff_room: assert (in_ready == (held != 4'd2));
      // The tagged word is still inside until it leaves, behind exactly the words accepted before it.
      a_tag_inside: assert (!tag_inside || tag_ahead < held);
      // It leaves with its own value at its own position: order and data kept.
      a_order_and_data: assert (!(tag_inside && tag_ahead == 4'd0 && out_valid) || out_data == tag_data);
      // Induction strengthening: the registers agree with the count, and a tagged second word is in skid_q.
      a_state_matches_count: assert (held == {3'd0, dut_out_valid_q} + {3'd0, dut_skid_valid_q});
      a_skid_holds_tag: assert (!(tag_inside && tag_ahead == 4'd1) || dut_skid_q == tag_data);
    end
  end

  // A stalled output holds still (the stream rule on the consumer's side).
  always @(posedge clk) begin
    if (!init && !$past(init) && !$past(rst) && $past(out_valid && !out_ready)) begin
      a_out_held: assert (out_valid && out_data == $past(out_data));
    end
  end

  // ---- reachability: the paths the assertions speak about happen ----
  reg was_full;
  always @(posedge clk) begin
    if (rst) begin
      was_full <= 1'b0;
    end else if (held == 4'd2) begin
      was_full <= 1'b1;
    end
  end
  always @(*) begin
    if (!init && !rst) begin
      c_full: cover (held == 4'd2 && !in_ready);
      c_empty_after_full: cover (was_full && held == 4'd0);
      c_stream_through: cover (in_fire && out_fire && held == 4'd1);  // a word in and out in one cycle
      c_tag_via_skid: cover (tag_gone && tag_was_skid);  // a word that waited in skid_q delivered
      c_stall_when_full: cover (was_full && held == 4'd2 && in_valid && !out_ready);
    end
  end

endmodule
`default_nettype wire
