`default_nettype none
// tt_delay: a WIDTH-bit signal delayed by DEPTH clock cycles (q is d of DEPTH cycles ago).
//
// The units use it to carry an element's tags (valid, last, address) and its old destination word alongside
// the memory latency and the requantiser's pipeline. RESET = 1 clears every stage on rst (control bits: a
// valid must not survive a reset); RESET = 0 leaves the stages unreset (data, no reset fan-out).
module tt_delay #(
  parameter integer WIDTH = 1,  // bits, >= 1
  parameter integer DEPTH = 1,  // cycles, >= 1
  parameter integer RESET = 0   // 1: rst clears the stages
) (
  input  wire             clk,
  input  wire             rst,
  input  wire [WIDTH-1:0] d,
  output wire [WIDTH-1:0] q
);

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (WIDTH < 1) begin : g_bad_width
      error_tt_delay_WIDTH_must_be_at_least_1 u_error ();
    end
    if (DEPTH < 1) begin : g_bad_depth
      error_tt_delay_DEPTH_must_be_at_least_1 u_error ();
    end
    if (RESET < 0 || RESET > 1) begin : g_bad_reset
      error_tt_delay_RESET_must_be_0_or_1 u_error ();
    end
  endgenerate

  // Stage k in [WIDTH*k +: WIDTH]; stage 0 takes d.
  reg [WIDTH*DEPTH-1:0] stage_q;
  wire [WIDTH*DEPTH-1:0] stage_d;
  generate
    if (DEPTH > 1) begin : g_chain
      assign stage_d = {stage_q[WIDTH*(DEPTH-1)-1:0], d};
    end else begin : g_single
      assign stage_d = d;
    end
    if (RESET != 0) begin : g_reset
      always @(posedge clk) begin
        if (rst) begin
          stage_q <= {(WIDTH*DEPTH){1'b0}};
        end else begin
          stage_q <= stage_d;
        end
      end
    end else begin : g_no_reset
      wire unused_rst = rst;
      always @(posedge clk) begin
        stage_q <= stage_d;
      end
    end
  endgenerate

  assign q = stage_q[WIDTH*(DEPTH-1) +: WIDTH];

endmodule
`default_nettype wire
