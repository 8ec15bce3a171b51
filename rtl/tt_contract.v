`default_nettype none
// tt_contract: the contraction engine, v1 (one MAC per cycle). Executes one CONTRACT descriptor
// (golden/isa.py ContractDesc, SPEC 5.1) bit-exactly:
//   out[o] = RQ(sum_k a[.] * b[.], shift, mode)                       (accumulate = 0)
//   out[o] = SAT(out[o] + RQ(sum_k a[.] * b[.], shift, mode))         (accumulate = 1)
// with saturation to out_w bits, one LFSR draw per output element in output order (STOCHASTIC only,
// SPEC 2.2), a per-op saturation count (an accumulated element can count twice: the RQ clamp and the clamp
// of the sum, as in the golden machine) and max |word written| for shift control (SPEC 4.2).
//
// Memories are outside (the future top owns the banks): synchronous-read ports with a fixed latency of
// MEM_LAT cycles (address and rd_en in cycle c, data valid in cycle c + MEM_LAT), read ports for a, b and
// (accumulate only) the old output word, and one write port (the write is taken at the end of the cycle
// wr_en is high). Read data are signed; a narrow bank sign-extends its words. Each output address is read
// and written once per op, and the read of element n+1 is issued before the write of element n only at a
// different address, so the read-modify-write needs no forwarding.
//
// Descriptor ports: loop i of the packed buses in [W*i +: W], loop 0 the innermost; loops 0..NRED-1 are the
// reductions, NRED..NRED+NOUT-1 the output loops (golden.isa.pack_ports). They must be held stable from
// start until done. Strides and addresses wrap modulo 2^ADDR_W (tt_loop_addr).
//
// Timing (no stalls: the memories never back-pressure): start in cycle 0, the descriptor check in cycle 1
// (tt_op_ctrl), beats (one MAC each) in cycles 2..M+1, the write of the last element in cycle
// M + MEM_LAT + MAC_REG + 7, done (and busy low) from cycle M + MEM_LAT + MAC_REG + 9 until the next start.
// Pipeline: issue -> MEM_LAT -> MAC (tt_mac_array, 1 + MAC_REG) -> requant (tt_requant, 3) -> tt_writeback:
// clamp (registered), accumulate and registered write, then the statistics (2).
//
// Errors are found in the check cycle, before any memory access or draw, so an illegal op leaves every memory
// and the LFSR untouched: done and error rise the cycle after it with error_code 1 (shift outside -16..47, the
// range tt_requant accepts; its own shift_err can then never fire), 2 (out_w outside 2..OUT_W) or 3 (a
// loop count of 0). A start while busy is ignored; seed_load belongs between ops.
module tt_contract #(
  parameter integer NOUT    = 6,   // output loops
  parameter integer NRED    = 4,   // reduction loops (NOUT + NRED <= 10)
  parameter integer CNT_W   = 16,  // loop count width
  parameter integer ADDR_W  = 20,  // element address and stride width
  parameter integer A_W     = 16,  // a read data width, signed
  parameter integer B_W     = 16,  // b read data width, signed
  parameter integer OUT_W   = 16,  // output word width (the widest out_w), 2..32
  parameter integer ACC_W   = 48,  // accumulator (SPEC 1.2)
  parameter integer MEM_LAT = 1,   // read latency of the memory ports, 1..8
  parameter integer MAC_REG = 1    // product register in the MAC (tt_mac_array PROD_REG), 0 or 1
) (
  input  wire                           clk,
  input  wire                           rst,
  // random stream (SPEC 3): persistent across ops
  input  wire                           seed_load,
  input  wire [31:0]                    seed,
  output wire [31:0]                    lfsr_state,
  // op descriptor
  input  wire                           start,
  input  wire [ADDR_W-1:0]              a_base,
  input  wire [ADDR_W-1:0]              b_base,
  input  wire [ADDR_W-1:0]              o_base,
  input  wire [(NOUT+NRED)*CNT_W-1:0]   counts,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  stride_a,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  stride_b,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  stride_o,
  input  wire [6:0]                     shift,       // signed
  input  wire                           mode,        // 0 nearest, 1 stochastic
  input  wire                           accumulate,
  input  wire [5:0]                     out_w,       // output width, 2..OUT_W
  // status
  output wire                           busy,
  output wire                           done,
  output wire                           error,
  output wire [3:0]                     error_code,
  output wire [31:0]                    sat_count,   // this op's saturations, saturating
  output wire [OUT_W-1:0]               maxabs,      // this op's max |word written|
  // memory ports
  output wire                           a_rd_en,
  output wire [ADDR_W-1:0]              a_rd_addr,
  input  wire [A_W-1:0]                 a_rd_data,
  output wire                           b_rd_en,
  output wire [ADDR_W-1:0]              b_rd_addr,
  input  wire [B_W-1:0]                 b_rd_data,
  output wire                           o_rd_en,
  output wire [ADDR_W-1:0]              o_rd_addr,
  input  wire [OUT_W-1:0]               o_rd_data,
  output wire                           o_wr_en,
  output wire [ADDR_W-1:0]              o_wr_addr,
  output wire [OUT_W-1:0]               o_wr_data
);

  localparam integer NLOOPS = NOUT + NRED;
  localparam integer RQ_LAT = 3;  // tt_requant's LATENCY
  localparam integer MAC_LAT = 1 + MAC_REG;  // tt_mac_array's latency
  localparam integer TAG_W = ADDR_W + 4;  // {addr_o, last, last_red, first, valid} of a beat
  localparam [31:0] OUT_W_U = OUT_W;
  localparam [3:0] ERR_NONE = 4'd0;
  localparam [3:0] ERR_SHIFT = 4'd1;
  localparam [3:0] ERR_OUT_W = 4'd2;
  localparam [3:0] ERR_COUNT = 4'd3;

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator); the
  // submodules check their own (NLOOPS, widths, ACC_W > A_W + B_W).
  generate
    if (NOUT < 1 || NRED < 0 || NOUT + NRED > 10) begin : g_bad_loops
      error_tt_contract_NOUT_must_be_at_least_1_and_NOUT_plus_NRED_at_most_10 u_error ();
    end
    if (MEM_LAT < 1 || MEM_LAT > 8) begin : g_bad_mem_lat
      error_tt_contract_MEM_LAT_must_be_1_to_8 u_error ();
    end
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_contract_OUT_W_must_be_2_to_32 u_error ();
    end
  endgenerate

  // ---- op control: legality check (registered at start, tt_op_ctrl), busy / done / error ----
  reg zero_count;
  integer c;
  always @* begin
    zero_count = 1'b0;
    for (c = 0; c < NLOOPS; c = c + 1) begin
      zero_count = zero_count || (counts[CNT_W*c +: CNT_W] == {CNT_W{1'b0}});
    end
  end

  wire signed [6:0] shift_s = shift;
  wire [3:0] err_d = (shift_s < -7'sd16 || shift_s > 7'sd47)          ? ERR_SHIFT :
                     (out_w < 6'd2 || {26'd0, out_w} > OUT_W_U)   ? ERR_OUT_W :
                     zero_count                                       ? ERR_COUNT : ERR_NONE;

  wire      fin_q;  // the cycle after the last element's write, its statistics complete (tt_writeback)
  wire      run;
  wire [3:0] err_q;

  tt_op_ctrl u_ctrl (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .err_d      (err_d),
    .fin        (fin_q),
    .run        (run),
    .busy       (busy),
    .done       (done),
    .error_code (err_q)
  );

  // ---- issue: the loop nest drives the read ports, one beat per cycle ----
  wire              la_valid;
  wire [ADDR_W-1:0] la_addr_a;
  wire [ADDR_W-1:0] la_addr_b;
  wire [ADDR_W-1:0] la_addr_o;
  wire              la_first;
  wire              la_last_red;
  wire              la_last;
  wire              la_done;

  tt_loop_addr #(
    .NLOOPS (NLOOPS),
    .NRED   (NRED),
    .CNT_W  (CNT_W),
    .ADDR_W (ADDR_W)
  ) u_loop (
    .clk       (clk),
    .rst       (rst),
    .start     (run),
    .counts    (counts),
    .stride_a  (stride_a),
    .stride_b  (stride_b),
    .stride_o  (stride_o),
    .base_a    (a_base),
    .base_b    (b_base),
    .base_o    (o_base),
    .valid     (la_valid),
    .ready     (1'b1),
    .addr_a    (la_addr_a),
    .addr_b    (la_addr_b),
    .addr_o    (la_addr_o),
    .first_red (la_first),
    .last_red  (la_last_red),
    .last      (la_last),
    .done      (la_done)
  );

  assign a_rd_en   = la_valid;
  assign a_rd_addr = la_addr_a;
  assign b_rd_en   = la_valid;
  assign b_rd_addr = la_addr_b;
  // The old output word is read when its last product issues; it waits in tt_writeback for the requantised sum.
  assign o_rd_en   = la_valid && la_last_red && accumulate;
  assign o_rd_addr = la_addr_o;

  // ---- beat tags through the memory latency ----
  wire [TAG_W-1:0] tag_issue = {la_addr_o, la_last, la_last_red, la_first, la_valid};
  wire [TAG_W-1:0] tag_m;
  tt_delay #(
    .WIDTH (TAG_W),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_mem_tag (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue),
    .q   (tag_m)
  );
  wire              m_valid    = tag_m[0];
  wire              m_first    = tag_m[1];
  wire              m_last_red = tag_m[2];
  wire              m_last     = tag_m[3];
  wire [ADDR_W-1:0] m_addr_o   = tag_m[TAG_W-1:4];

  // ---- MAC: the operands arrive MEM_LAT cycles after their addresses ----
  wire [ACC_W-1:0] acc;
  tt_mac_array #(
    .LANES    (1),
    .A_W      (A_W),
    .B_W      (B_W),
    .ACC_W    (ACC_W),
    .PROD_REG (MAC_REG)
  ) u_mac (
    .clk   (clk),
    .rst   (rst),
    .en    (m_valid),
    .clear (m_first),
    .a     (a_rd_data),
    .b     (b_rd_data),
    .acc   (acc)
  );

  // The sum is complete in acc MAC_LAT cycles after its last product: requantise it then.
  wire [ADDR_W+1:0] tag_rq;
  tt_delay #(
    .WIDTH (ADDR_W + 2),
    .DEPTH (MAC_LAT),
    .RESET (1)
  ) u_mac_tag (
    .clk (clk),
    .rst (rst),
    .d   ({m_addr_o, m_valid && m_last, m_valid && m_last_red}),
    .q   (tag_rq)
  );
  wire              rq_in_q   = tag_rq[0];
  wire              rq_fin_q  = tag_rq[1];
  wire [ADDR_W-1:0] rq_addr_q = tag_rq[ADDR_W+1:2];

  // ---- random stream: one draw per requantised element, STOCHASTIC only (SPEC 2.2) ----
  wire [7:0] rnd;
  tt_lfsr #(
    .DRAWS (1)
  ) u_lfsr (
    .clk       (clk),
    .rst       (rst),
    .seed_load (seed_load),
    .seed      (seed),
    .advance   (rq_in_q && mode),
    .rnd       (rnd),
    .state     (lfsr_state)
  );

  wire             rq_valid;
  wire [OUT_W-1:0] rq_y;
  wire             rq_sat;
  wire             unused_rq_shift_err;  // cannot fire: shifts are checked at start
  tt_requant #(
    .ACC_W (ACC_W),
    .OUT_W (OUT_W),
    .LANES (1)
  ) u_rq (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (rq_in_q),
    .acc       (acc),
    .shift     (shift),
    .mode      (mode),
    .rnd       (rnd),
    .out_valid (rq_valid),
    .y         (rq_y),
    .sat       (rq_sat),
    .shift_err (unused_rq_shift_err)
  );

  // ---- write back: clamp, saturating accumulate, statistics (shared with the other unit) ----
  wire [31:0]      wb_sat_count;
  wire [OUT_W-1:0] wb_maxabs;
  tt_writeback #(
    .ADDR_W    (ADDR_W),
    .OUT_W     (OUT_W),
    .TAG_DELAY (RQ_LAT),
    .OLD_DELAY (MAC_LAT + RQ_LAT)  // the old word arrives with the operands: the MAC, then the requantiser
  ) u_writeback (
    .clk        (clk),
    .rst        (rst),
    .clear      (run),
    .tag_fin    (rq_fin_q),
    .tag_addr   (rq_addr_q),
    .in_valid   (rq_valid),
    .rq_y       (rq_y),
    .rq_sat     (rq_sat),
    .old_data   (o_rd_data),
    .accumulate (accumulate),
    .out_w      (out_w),
    .wr_en      (o_wr_en),
    .wr_addr    (o_wr_addr),
    .wr_data    (o_wr_data),
    .fin        (fin_q),
    .sat_count  (wb_sat_count),
    .maxabs     (wb_maxabs)
  );

  assign error      = err_q != ERR_NONE;
  assign error_code = err_q;
  assign sat_count  = wb_sat_count;
  assign maxabs     = wb_maxabs;

  wire unused_la_done = la_done;  // the op ends when its last write is out, not when the nest ends

endmodule
`default_nettype wire
