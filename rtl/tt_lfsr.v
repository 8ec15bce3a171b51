`default_nettype none
// tt_lfsr: the accelerator's single random stream (golden/SPEC.md section 3).
//
// A 32-bit right-shifting Galois LFSR, mask 0x80200003 (x^32 + x^22 + x^2 + x + 1). One draw = 8 steps;
// the draw is the low byte of the new state. DRAWS draws are offered per cycle (leap-ahead): rnd byte i
// is draw i counted from the current state. A cycle with advance high consumes them: all DRAWS (the state jumps
// DRAWS draws ahead) with leap high, else only draw 0 (one draw ahead). The leap-ahead is a chain of step
// functions that synthesis flattens into XOR trees (the constant GF(2) matrices J^1..J^DRAWS).
//
// Latency: rnd and state are registers (rnd is computed from the next state before the edge); seed_load and
// advance take effect on the next edge.
// Priority: rst > seed_load > advance. Reset loads the state of seed 0 (0xA5A5A5A5).
module tt_lfsr #(
  parameter integer DRAWS = 1  // draws per cycle, 1..16
) (
  input  wire                 clk,
  input  wire                 rst,
  input  wire                 seed_load,  // state <= map(seed)
  input  wire [31:0]          seed,
  input  wire                 advance,    // consume draws: the DRAWS draws on rnd with leap, else draw 0
  input  wire                 leap,
  output wire [8*DRAWS-1:0]   rnd,        // draw i in bits [8i+7:8i]
  output wire [31:0]          state       // current state, for checkpoints
);

`include "tt_arch.vh"  // LFSR_MASK, LFSR_SEED_XOR, LFSR_STEPS_PER_DRAW

  // Elaboration-time parameter check: instantiating a module that does not exist stops both
  // Icarus 11 and Verilator with the module name as the message (Icarus 11 has no elaboration $fatal).
  generate
    if (DRAWS < 1 || DRAWS > 16) begin : g_bad_draws
      error_tt_lfsr_DRAWS_must_be_1_to_16 u_error ();
    end
  endgenerate

  // One draw: eight Galois steps.
  function automatic [31:0] lfsr_draw(input [31:0] s);
    integer i;
    reg [31:0] t;
    begin
      t = s;
      for (i = 0; i < LFSR_STEPS_PER_DRAW; i = i + 1) begin
        t = {1'b0, t[31:1]} ^ (t[0] ? LFSR_MASK : 32'd0);
      end
      lfsr_draw = t;
    end
  endfunction

  reg  [31:0] state_q;
  wire [31:0] seed_state = seed ^ LFSR_SEED_XOR;

  // Leap-ahead from a state: the DRAWS draws it offers (draw i from the state after i+1 draws), and the state
  // after them. Functions, not chains of nets, so Verilator sees no false combinational loop.
  function automatic [8*DRAWS-1:0] leap_draws(input [31:0] s);
    integer d;
    reg [31:0] t;
    begin
      t = s;
      leap_draws = {(8*DRAWS){1'b0}};
      for (d = 0; d < DRAWS; d = d + 1) begin
        t = lfsr_draw(t);
        leap_draws[8*d +: 8] = t[7:0];
      end
    end
  endfunction

  function automatic [31:0] leap_state(input [31:0] s);
    integer d;
    begin
      leap_state = s;
      for (d = 0; d < DRAWS; d = d + 1) begin
        leap_state = lfsr_draw(leap_state);
      end
    end
  endfunction

  // The state of the next cycle, and its draws registered with it: rnd leaves a flip-flop, so the XOR trees
  // of the leap-ahead sit before the register instead of in front of the requantiser's bias.
  reg [31:0] state_d;
  always @* begin
    if (rst) begin
      state_d = LFSR_SEED_XOR;
    end else if (seed_load) begin
      // The all-zero state is the LFSR's fixed point: the SPEC maps it to 1.
      state_d = (seed_state == 32'd0) ? 32'd1 : seed_state;
    end else if (advance && leap) begin
      state_d = leap_state(state_q);
    end else if (advance) begin
      state_d = lfsr_draw(state_q);
    end else begin
      state_d = state_q;
    end
  end

  reg [8*DRAWS-1:0] rnd_q;
  always @(posedge clk) begin
    state_q <= state_d;
    rnd_q   <= leap_draws(state_d);
  end
  assign rnd = rnd_q;

  assign state = state_q;

endmodule
`default_nettype wire
